/** Messages between the analytics worker pool (main thread) and the analytics worker. */
import type { ErrorCode } from "../../errors/catalogue.ts";
import type { Confinement } from "./query/compile.ts";
import type { Row } from "./execute.ts";

export interface InitMessage {
  type: "init";
  dbPath: string;
}

export interface QueryMessage {
  type: "query";
  id: number;
  sql: string;
  confinement: Confinement;
  /** The injected clock's now: what now() and today() mean in the query. */
  nowMs: number;
  /** Date.now() after which the worker abandons the query. */
  deadlineMs: number;
  timeoutMs: number;
  maxRows: number;
  maxBytes: number;
}

export type ToWorker = InitMessage | QueryMessage;

export type FromWorker =
  | { type: "ready" }
  | { type: "failed"; detail: string }
  | { type: "rows"; id: number; rows: Row[] }
  /** `broken`: the worker's parser can no longer be trusted; replace the worker. */
  | { type: "error"; id: number; code: ErrorCode; detail: string; broken?: boolean };
