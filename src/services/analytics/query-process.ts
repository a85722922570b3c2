/**
 * An analytics query process: `tollgate analytics-query-process`, started by the pool in `serve`
 * (process-pool.ts), never by hand. It opens analytics.db read-only, compiles each caller's query
 * (parsing hostile SQL can be slow or crash, so it happens here, not in `serve`) and runs it, one
 * at a time. A process, not a thread, because bun:sqlite can neither interrupt a statement nor
 * install a progress handler, and a thread inside native SQLite code cannot be stopped: a process
 * can be killed at once, and its CPU with it.
 */
import type { Database } from "bun:sqlite";
import { AppError } from "../../errors/app-error.ts";
import { compileAnalyticsQuery, initSqlParser, ParserBrokenError, TOO_COMPLEX_DETAIL } from "./query/compile.ts";
import { executeCompiled, openAnalyticsConnection, timeoutError, type Watchdog } from "./execute.ts";
import type { FromQueryProcess, QueryMessage, ToQueryProcess } from "./protocol.ts";

/** The IPC channel to `serve` (process.send / process.on("message") in main.ts). */
export interface ParentChannel {
  send(message: FromQueryProcess): void;
  onMessage(handler: (message: ToQueryProcess) => void): void;
}

/**
 * Serves queries from `parent` until the process is killed (or `serve` is gone: lifeline.ts). The
 * process runs at the lowest priority (main.ts lowers it before it loads the program).
 */
export function serveAnalyticsQueries(parent: ParentChannel): void {
  // Ends this process when `serve` is gone (lifeline.ts); unref'd, so that it does not keep the
  // process alive by itself once the channel has closed.
  new Worker(new URL("./lifeline.ts", import.meta.url)).unref();
  const watchdog: Watchdog = { deadlineMs: 0, calls: 0, expired: false };
  let db: Database | undefined;
  parent.onMessage(async (message) => {
    if (message.type === "init") {
      try {
        await initSqlParser();
        db = openAnalyticsConnection(message.dbPath, watchdog);
        parent.send({ type: "ready" });
      } catch (error) {
        parent.send({ type: "failed", detail: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
    if (db) parent.send(runQuery(db, watchdog, message));
  });
}

function runQuery(db: Database, watchdog: Watchdog, job: QueryMessage): FromQueryProcess {
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
