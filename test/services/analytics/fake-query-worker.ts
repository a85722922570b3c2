/**
 * A stand-in for the analytics worker, for the pool's tests. The query text says what to do:
 * `rows:<n>` answers n rows, `spin:<ms>` keeps the thread busy in JavaScript for that long first,
 * `crash` throws out of the message handler, `fail` answers a 400.
 */
import type { FromWorker, ToWorker } from "../../../src/services/analytics/protocol.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  const reply = (m: FromWorker) => self.postMessage(m);
  if (message.type === "init") {
    reply({ type: "ready" });
    return;
  }
  const [command, arg] = message.sql.split(":");
  if (command === "crash") throw new Error("the worker fell over");
  if (command === "fail") {
    reply({ type: "error", id: message.id, code: "invalid_analytics_query", detail: "bad query" });
    return;
  }
  if (command === "spin") {
    const until = Date.now() + Number(arg);
    while (Date.now() < until) { /* busy, as SQLite would be */ }
  }
  reply({ type: "rows", id: message.id, rows: [{ sql: message.sql }] });
};
