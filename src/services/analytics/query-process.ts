/**
 * An analytics query process: `tollgate analytics-query-process`, started by the pool in `serve`
 * (process-pool.ts), never by hand. It opens analytics.db read-only (or, on a cluster node, one
 * connection to the cluster's PostgreSQL: execute-pg.ts), compiles each caller's query (parsing
 * hostile SQL can be slow or crash, so it happens here, not in `serve`) and runs it, one at a time.
 * A process, not a thread, because bun:sqlite can neither interrupt a statement nor install a
 * progress handler, and a thread inside native SQLite code cannot be stopped: a process can be
 * killed at once, and its CPU with it.
 */
import { AppError } from "../../errors/app-error.ts";
import { compileAnalyticsQuery, initSqlParser, ParserBrokenError, POSTGRES, SQLITE, TOO_COMPLEX_DETAIL, type CompiledQuery, type Dialect } from "./query/compile.ts";
import { executeCompiled, openAnalyticsConnection, timeoutError, type Row, type Watchdog } from "./execute.ts";
import { executeCompiledPg, openPgAnalyticsConnection } from "./execute-pg.ts";
import type { FromQueryProcess, InitMessage, QueryMessage, ToQueryProcess } from "./protocol.ts";

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
  let store: Store | undefined;
  parent.onMessage(async (message) => {
    if (message.type === "init") {
      try {
        await initSqlParser();
        store = await openStore(message);
        parent.send({ type: "ready" });
      } catch (error) {
        parent.send({ type: "failed", detail: error instanceof Error ? error.message : String(error) });
      }
      return;
    }
    if (store) parent.send(await runQuery(store, message));
  });
}

/** Where queries run: the dialect they are translated to, and how a translated query runs. */
interface Store {
  dialect: Dialect;
  execute(compiled: CompiledQuery, job: QueryMessage): Row[] | Promise<Row[]>;
}

async function openStore(init: InitMessage): Promise<Store> {
  if (init.postgresUrl !== undefined) {
    const sql = openPgAnalyticsConnection(init.postgresUrl);
    // Ready means connected: a server that cannot be reached fails the start (503), not the query.
    await sql`SELECT 1`;
    return { dialect: POSTGRES, execute: (compiled, job) => executeCompiledPg(sql, compiled, job) };
  }
  const watchdog: Watchdog = { deadlineMs: 0, calls: 0, expired: false };
  const db = openAnalyticsConnection(init.dbPath, watchdog);
  return {
    dialect: SQLITE,
    execute(compiled, job) {
      watchdog.deadlineMs = job.deadlineMs;
      return executeCompiled(db, watchdog, compiled, job);
    },
  };
}

async function runQuery(store: Store, job: QueryMessage): Promise<FromQueryProcess> {
  try {
    const compiled = compileAnalyticsQuery(job.sql, { confinement: job.confinement, nowMs: job.nowMs, maxRows: job.maxRows, dialect: store.dialect });
    // Compiling is bounded by the query's size, but counts against its time all the same.
    if (Date.now() > job.deadlineMs) throw timeoutError(job.timeoutMs);
    return { type: "rows", id: job.id, rows: await store.execute(compiled, job) };
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
