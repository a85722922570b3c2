/**
 * Which of a cluster node's servers an error says is unreachable, from the codes Bun's clients
 * give (`code`, and PostgreSQL's SQLSTATE in `errno`), never from messages: a request that failed
 * for it is answered `service_unavailable` naming the server, not `unexpected_error`.
 * Drizzle wraps the driver's error (its `cause`), and callers wrap theirs, so the whole chain of
 * causes is read. The codes are those of Bun's SQL and Redis documentation: the connection
 * refused, closed or timed out, and the server's own refusals while it shuts down or starts
 * (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now) or is full (53300
 * too_many_connections).
 */
import { inCauses } from "./records/errors.ts";

export type StoreName = "PostgreSQL" | "Redis";

/**
 * What a store adapter throws when its server gave no usable answer in time (e.g. the rate-limit
 * windows' Redis command timed out), for the adapters whose own bound Bun's client lacks.
 */
export class StoreUnreachable extends Error {
  override readonly name: string = "StoreUnreachable";
  constructor(readonly store: StoreName, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

const PG_CONNECTION_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED", "ERR_POSTGRES_CONNECTION_FAILED", "ERR_POSTGRES_CONNECTION_REFUSED", "ERR_POSTGRES_CONNECTION_TIMEOUT",
]);
const PG_UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300"]);
const REDIS_CONNECTION_CODES = new Set(["ERR_REDIS_CONNECTION_CLOSED", "ERR_REDIS_CONNECTION_TIMEOUT", "ERR_REDIS_IDLE_TIMEOUT"]);

/** The unreachable server and the code that says so, or undefined when `error` is about something else. */
export function unreachableStore(error: unknown): { store: StoreName; code: string } | undefined {
  let found: { store: StoreName; code: string } | undefined;
  inCauses(error, (e) => {
    found = classify(e);
    return found !== undefined;
  });
  return found;
}

function classify(e: { code?: unknown; errno?: unknown }): { store: StoreName; code: string } | undefined {
  if (e instanceof StoreUnreachable) return { store: e.store, code: e.name };
  const code = typeof e.code === "string" ? e.code : undefined;
  if (code === undefined) return undefined;
  if (PG_CONNECTION_CODES.has(code)) return { store: "PostgreSQL", code };
  if (code === "ERR_POSTGRES_SERVER_ERROR" && PG_UNAVAILABLE_STATES.has(String(e.errno))) return { store: "PostgreSQL", code: String(e.errno) };
  if (REDIS_CONNECTION_CODES.has(code)) return { store: "Redis", code };
  return undefined;
}
