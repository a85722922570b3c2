/**
 * A stand-in for an analytics query process, for the pool's tests, speaking the same protocol over
 * the IPC channel. The query text says what to do: `rows:<n>` answers n rows, `spin:<ms>` keeps the
 * process busy for that long first (0: for ever, as a runaway SQLite loop would), `crash` exits,
 * `fail` answers a 400, `broken` answers a 400 that makes the pool replace the process. A dbPath of
 * `fail` makes it fail to start.
 */
import type { FromQueryProcess, ToQueryProcess } from "../../../src/services/analytics/protocol.ts";

const reply = (m: FromQueryProcess) => process.send!(m);

process.on("message", (message: ToQueryProcess) => {
  if (message.type === "init") {
    reply(message.dbPath === "fail" ? { type: "failed", detail: "no database" } : { type: "ready" });
    return;
  }
  const [command, arg] = message.sql.split(":");
  if (command === "crash") process.exit(3);
  if (command === "fail" || command === "broken") {
    reply({ type: "error", id: message.id, code: "invalid_analytics_query", detail: "bad query", broken: command === "broken" });
    return;
  }
  if (command === "spin") {
    const until = Number(arg) === 0 ? Infinity : Date.now() + Number(arg);
    while (Date.now() < until) { /* busy, as SQLite would be */ }
  }
  reply({ type: "rows", id: message.id, rows: [{ sql: message.sql, pid: process.pid }] });
});
