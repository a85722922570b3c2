/**
 * Messages between the analytics query pool (in `serve`) and an analytics query process, over
 * Bun's IPC channel (structured clone, so rows keep their numbers, strings and blobs as they are).
 */
import type { ErrorCode } from "../../errors/catalogue.ts";
import type { Confinement } from "./query/compile.ts";
import type { Row } from "./execute.ts";

/**
 * Where the queries run: analytics.db, read-only (the embedded mode), or the cluster's database
 * (TOLLGATE_DATABASE_URL, password included; a cluster node, which has no analytics.db), queried as
 * its read-only role. The URL is handed over in the init message, never in argv or the environment.
 */
export type AnalyticsDatabase =
  | { dbPath: string; postgresUrl?: never }
  | { postgresUrl: string; dbPath?: never };

export type InitMessage = { type: "init" } & AnalyticsDatabase;

export interface QueryMessage {
  type: "query";
  id: number;
  sql: string;
  confinement: Confinement;
  /** The injected clock's now: what now() and today() mean in the query. */
  nowMs: number;
  /** Date.now() after which the process abandons the query itself (the pool kills it then anyway). */
  deadlineMs: number;
  timeoutMs: number;
  maxRows: number;
  maxBytes: number;
}

export type ToQueryProcess = InitMessage | QueryMessage;

export type FromQueryProcess =
  | { type: "ready" }
  | { type: "failed"; detail: string }
  | { type: "rows"; id: number; rows: Row[] }
  /** `broken`: the process's parser can no longer be trusted; replace the process. */
  | { type: "error"; id: number; code: ErrorCode; detail: string; broken?: boolean };
