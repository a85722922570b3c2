/**
 * Running a compiled analytics query on a read-only connection, inside a query process: the
 * watchdog that enforces the deadline from within SQLite's loops, the result-size limit, and the
 * mapping of SQLite's errors onto the API's error codes.
 */
import { Database, SQLiteError } from "bun:sqlite";
import { AppError } from "../../errors/app-error.ts";
import { WATCHDOG_FUNCTION, type CompiledQuery } from "./query/compile.ts";

export type Row = Record<string, unknown>;

/** Rows one query may return: upstream's default max_query_result_rows. A longer result is cut. */
export const MAX_ANALYTICS_ROWS = 10_000;

/** Upstream's cap on an encoded result (max_result_bytes). */
export const MAX_RESULT_BYTES = 4 * 1024 * 1024;

/** Rows and bytes a query may return, and its time limit (for the error's detail). */
export interface ExecutionLimits {
  maxRows: number;
  maxBytes: number;
  timeoutMs: number;
}

/** The deadline of the query currently running on a connection, in Date.now() milliseconds. */
export interface Watchdog {
  deadlineMs: number;
  calls: number;
  expired: boolean;
}

class DeadlinePassed extends Error {}

/** How many calls pass between clock reads: a clock read per row would cost more than the row. */
const CHECK_EVERY = 256;

/** Opens the database read-only for analytics, with the watchdog function registered. */
export function openAnalyticsConnection(path: string, watchdog: Watchdog): Database {
  const db = new Database(path, { readonly: true });
  db.run("PRAGMA busy_timeout = 5000");
  // Belt and braces: the connection is read-only already; query_only refuses writes at the SQL level too.
  db.run("PRAGMA query_only = ON");
  db.function(WATCHDOG_FUNCTION, { varargs: true, deterministic: false }, () => {
    watchdog.calls += 1;
    if (watchdog.calls % CHECK_EVERY === 0 && Date.now() > watchdog.deadlineMs) {
      watchdog.expired = true;
      throw new DeadlinePassed("analytics query deadline passed");
    }
    return 1;
  });
  return db;
}

/**
 * Runs `compiled` and returns its rows (column names as selected). Throws AppError: 422
 * `query_execution_timeout` past the deadline, 422 `query_memory_limit_exceeded` for results over
 * `maxBytes`, 400 `invalid_analytics_query` for errors in the query, 503 for storage trouble.
 */
export function executeCompiled(db: Database, watchdog: Watchdog, compiled: CompiledQuery, limits: ExecutionLimits): Row[] {
  watchdog.calls = 0;
  watchdog.expired = false;
  let statement;
  try {
    statement = db.prepare<Row, Array<string | number>>(compiled.sql);
    return takeRows(statement.iterate(...compiled.params), limits);
  } catch (error) {
    throw mapExecutionError(error, watchdog, limits.timeoutMs);
  } finally {
    statement?.finalize();
  }
}

/**
 * The rows of a result, at most `maxRows` (the LIMIT we add already caps them; stopping here as well
 * costs nothing); 422 `query_memory_limit_exceeded` once they add up to more than `maxBytes`,
 * counted as they are read so that an oversized result stops early.
 */
export function takeRows(result: Iterable<Row>, limits: { maxRows: number; maxBytes: number }): Row[] {
  const rows: Row[] = [];
  let bytes = 0;
  for (const row of result) {
    bytes += estimateJsonBytes(row);
    if (bytes > limits.maxBytes) {
      throw new AppError("query_memory_limit_exceeded", { detail: `The result is larger than ${limits.maxBytes} bytes; select fewer rows or columns.` });
    }
    rows.push(row);
    if (rows.length >= limits.maxRows) break;
  }
  return rows;
}

function mapExecutionError(error: unknown, watchdog: Watchdog, timeoutMs: number): Error {
  if (error instanceof AppError) return error;
  if (error instanceof DeadlinePassed || watchdog.expired) return timeoutError(timeoutMs);
  if (error instanceof SQLiteError) {
    switch (error.code) {
      case "SQLITE_NOMEM":
      case "SQLITE_TOOBIG":
      case "SQLITE_FULL":
        return new AppError("query_memory_limit_exceeded", { detail: "The query needed more memory than allowed." });
      case "SQLITE_BUSY":
      case "SQLITE_LOCKED":
      case "SQLITE_IOERR":
      case "SQLITE_CANTOPEN":
      case "SQLITE_CORRUPT":
        return new AppError("analytics_connection_failed", { detail: "The analytics store could not be read; try again.", cause: error });
      default:
        return new AppError("invalid_analytics_query", { detail: `The query could not be run: ${error.message}` });
    }
  }
  return error instanceof Error ? error : new Error(String(error));
}

export function timeoutError(timeoutMs: number): AppError {
  return new AppError("query_execution_timeout", { detail: `The query ran longer than the limit of ${timeoutMs} ms.` });
}

/** Roughly the JSON size of a row. */
function estimateJsonBytes(row: Row): number {
  let n = 2;
  for (const [key, value] of Object.entries(row)) {
    n += key.length + 4;
    n += typeof value === "string" ? value.length + 2 : value instanceof Uint8Array ? value.byteLength * 2 : 24;
  }
  return n;
}
