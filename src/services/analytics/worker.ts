/**
 * The analytics worker: a thread of its own with its own read-only connection. It compiles the
 * caller's query (parsing can be slow or crash on hostile input, so it happens here too) and runs
 * it, one query at a time. The pool terminates and replaces it when a query overruns.
 */
import type { Database } from "bun:sqlite";
import { AppError } from "../../errors/app-error.ts";
import { runInBackground } from "../../lib/thread-priority.ts";
import { compileAnalyticsQuery, initSqlParser, ParserBrokenError, TOO_COMPLEX_DETAIL } from "./query/compile.ts";
import { executeCompiled, openAnalyticsConnection, timeoutError, type Watchdog } from "./execute.ts";
import type { FromWorker, QueryMessage, ToWorker } from "./protocol.ts";

declare const self: Worker;

function serve(): void {
  const watchdog: Watchdog = { deadlineMs: 0, calls: 0, expired: false };
  let db: Database | undefined;
  const reply = (message: FromWorker) => self.postMessage(message);

  self.onmessage = async (event: MessageEvent<ToWorker>) => {
    const message = event.data;
    if (message.type === "init") {
      // A caller's query, however heavy, must not slow the verifications beside it.
      runInBackground();
      try {
        await initSqlParser();
        db = openAnalyticsConnection(message.dbPath, watchdog);
        reply({ type: "ready" });
      } catch (error) {
        reply({ type: "failed", detail: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
    if (db) reply(runQuery(db, watchdog, message));
  };
}

function runQuery(db: Database, watchdog: Watchdog, job: QueryMessage): FromWorker {
  watchdog.deadlineMs = job.deadlineMs;
  try {
    const compiled = compileAnalyticsQuery(job.sql, { confinement: job.confinement, nowMs: job.nowMs, maxRows: job.maxRows });
    // Compiling is bounded by the query's size, but counts against its time all the same.
    if (Date.now() > job.deadlineMs) throw timeoutError(job.timeoutMs);
    return { type: "rows", id: job.id, rows: executeCompiled(db, watchdog, compiled, job) };
  } catch (error) {
    if (error instanceof ParserBrokenError) return { type: "error", id: job.id, code: "invalid_analytics_query", detail: TOO_COMPLEX_DETAIL, broken: true };
    if (error instanceof AppError) return { type: "error", id: job.id, code: error.code, detail: error.detail };
    if (error instanceof RangeError) {
      // A stack overflow while walking a pathological query: the query's shape, not a fault here.
      return { type: "error", id: job.id, code: "invalid_analytics_query", detail: "The query is too deeply nested." };
    }
    return { type: "error", id: job.id, code: "unexpected_error", detail: error instanceof Error ? error.message : String(error) };
  }
}

serve();
