/**
 * Running a compiled analytics query on PostgreSQL (the cluster mode), inside a query process: each
 * query in a read-only transaction of its own, as the read-only role tollgate_analytics_reader
 * (SELECT on schema `analytics` and nothing else), with PostgreSQL's statement_timeout as the
 * deadline, a bounded work_mem and only pg_catalog on the search path; then ROLLBACK. The row and
 * result-size limits and the error codes are execute.ts's.
 *
 * The role is the confinement's last line: the translator already names only the analytics tables
 * (and the caller's rows of them), but should it ever print another table, PostgreSQL refuses it.
 */
import { SQL } from "bun";
import { AppError } from "../../errors/app-error.ts";
import { ANALYTICS_READER_ROLE } from "../../storage/pg/schema/analytics.ts";
import type { CompiledQuery } from "./query/compile.ts";
import { takeRows, timeoutError, type ExecutionLimits, type Row } from "./execute.ts";

/** Memory a sort or hash of one query may take before PostgreSQL spills it to disk. */
export const ANALYTICS_WORK_MEM = "16MB";

/** PostgreSQL's type ids of int8 and numeric (read as BigInt and as text) and bool. */
const INT8 = 20;
const NUMERIC = 1700;
const BOOL = 16;

export interface PgLimits extends ExecutionLimits {
  /** Date.now() at which the query must have ended: PostgreSQL's statement_timeout is set to what is left. */
  deadlineMs: number;
}

/** A query process's one connection to the cluster's database. */
export function openPgAnalyticsConnection(url: string): SQL {
  // int8 as BigInt (not text), so that numbers stay numbers (converted below); one connection, opened on first use.
  return new SQL(url, { max: 1, bigint: true, connectionTimeout: 10 });
}

/**
 * Runs `compiled` and returns its rows (column names as selected, int8 and numeric values as
 * numbers, booleans as 1 or 0, as SQLite answers). Throws AppError: 422 `query_execution_timeout`
 * past the deadline, 422 `query_memory_limit_exceeded` for results over `maxBytes` or out of
 * PostgreSQL's memory, 400 `invalid_analytics_query` for errors in the query, 503 for connection trouble.
 */
export async function executeCompiledPg(sql: SQL, compiled: CompiledQuery, limits: PgLimits): Promise<Row[]> {
  const timeoutMs = Math.max(1, Math.floor(limits.deadlineMs - Date.now()));
  let connection: Awaited<ReturnType<SQL["reserve"]>> | undefined;
  try {
    connection = await sql.reserve();
    await confine(connection, timeoutMs);
    const result = await connection.unsafe(compiled.sql, compiled.params).values();
    const columns: ReadonlyArray<{ name: string; type: number }> = result.columns ?? [];
    const names = compiled.columns?.length === columns.length ? compiled.columns : columns.map((c) => c.name);
    return takeRows(asRows(result as unknown as unknown[][], columns.map((c, i) => ({ name: names[i]!, type: c.type }))), limits);
  } catch (error) {
    throw mapPgError(error, limits.timeoutMs);
  } finally {
    if (connection) {
      // A broken connection cannot roll back; the pool opens a new one for the next query.
      await connection.unsafe("ROLLBACK").simple().catch(() => undefined);
      connection.release();
    }
  }
}

/**
 * Opens the query's transaction: read-only, as the reader role, with the deadline, work_mem and
 * search path; one round trip, and the settings end with the transaction. The role first: the rest
 * is set as it. A failure here is the server's set-up (no role, the role not granted), never the
 * caller's query: 503.
 */
async function confine(connection: SQL, timeoutMs: number): Promise<void> {
  try {
    await connection.unsafe(
      `BEGIN READ ONLY; SET LOCAL ROLE ${ANALYTICS_READER_ROLE}; SET LOCAL statement_timeout = ${timeoutMs};`
      + ` SET LOCAL work_mem = '${ANALYTICS_WORK_MEM}'; SET LOCAL search_path = pg_catalog`,
    ).simple();
  } catch (error) {
    throw connectionFailed(error);
  }
}

function connectionFailed(cause: unknown): AppError {
  return new AppError("analytics_connection_failed", { detail: "The analytics store could not be read; try again.", cause });
}

/** Each row's values by column name, as SQLite's rows. */
function* asRows(result: unknown[][], columns: ReadonlyArray<{ name: string; type: number }>): Generator<Row> {
  for (const values of result) {
    const row: Row = {};
    columns.forEach((column, i) => { row[column.name] = toValue(values[i], column.type); });
    yield row;
  }
}

function toValue(value: unknown, type: number): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  if (type === NUMERIC && typeof value === "string") return Number(value);
  if (type === BOOL && typeof value === "boolean") return value ? 1 : 0;
  if (type === INT8 && typeof value === "string") return Number(value);
  return value;
}

/** PostgreSQL's message, in SQLite's words where callers meet it most (an unknown column), so both modes answer alike. */
function callerMessage(state: string, message: string): string {
  const column = state === "42703" ? /^column (?:"(.+)"|(\S+)) does not exist$/.exec(message) : null;
  return column ? `no such column: ${column[1] ?? column[2]}` : message;
}

/**
 * By SQLSTATE: 57014 is statement_timeout; classes 53 (insufficient resources) and 54 (program
 * limit) are the query's size; 08, 57 (a server shutting down), 58 and XX the server's trouble;
 * any other refusal (42 syntax or access, 22 data, 21 cardinality, 0A unsupported) the query's own.
 * An error that is no server's answer is the connection's.
 */
function mapPgError(error: unknown, timeoutMs: number): Error {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown }).code;
  const state = (error as { errno?: unknown }).errno;
  if (code === "ERR_POSTGRES_SERVER_ERROR" && typeof state === "string") {
    if (state === "57014") return timeoutError(timeoutMs);
    if (/^5[34]/.test(state)) return new AppError("query_memory_limit_exceeded", { detail: "The query needed more memory than allowed." });
    if (!/^(08|57|58|XX)/.test(state)) return new AppError("invalid_analytics_query", { detail: `The query could not be run: ${callerMessage(state, (error as Error).message)}` });
  }
  if (typeof code === "string" && code.startsWith("ERR_POSTGRES_")) return connectionFailed(error);
  return error instanceof Error ? error : new Error(String(error));
}
