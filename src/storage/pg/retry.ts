/**
 * Running a PostgreSQL transaction again when it lost a race with another: PostgreSQL aborted it
 * (serialization failure 40001, deadlock 40P01), a row it found was deleted before it could refer
 * to it (foreign key 23503, at READ COMMITTED), or the unit itself said so (LostRace). Between
 * attempts it waits a random time up to a bound that doubles each attempt ("full jitter"), so
 * racers that collided do not collide again in step, and it never waits past the caller's deadline.
 * A failure that escapes is named by its SQLSTATE, never by drizzle's "Failed query: …" message,
 * which quotes the statement and its values (key hashes, names) into the log.
 */
import { DrizzleQueryError } from "drizzle-orm";
import { inCauses, LostRace } from "../records/errors.ts";

/** SQLSTATEs of a transaction that lost a race: serialization_failure, deadlock_detected, foreign_key_violation. */
const RACE_STATES = new Set(["40001", "40P01", "23503"]);

/** Attempts of a transaction that keeps losing races, at most (the deadline usually ends it first). */
export const MAX_ATTEMPTS = 12;
/** The first retry waits up to this long; each further one up to twice the previous bound. */
export const FIRST_BACKOFF_MS = 4;
/** No retry waits longer than this. */
export const MAX_BACKOFF_MS = 250;

/** The SQLSTATE PostgreSQL answered `error` with (drizzle wraps the driver's error), if any. */
export function sqlStateOf(error: unknown): string | undefined {
  let state: string | undefined;
  inCauses(error, (e) => {
    if (typeof e.errno === "string" && /^[0-9A-Z]{5}$/.test(e.errno)) state = e.errno;
    return state !== undefined;
  });
  return state;
}

/** True when the transaction lost a race with another and may succeed when run again. */
export function lostRace(error: unknown): boolean {
  if (inCauses(error, (e) => e instanceof LostRace)) return true;
  const state = sqlStateOf(error);
  return state !== undefined && RACE_STATES.has(state);
}

/** What PostgreSQL refused, by SQLSTATE and its message (no statement, no values), the driver's error as its cause. */
export class PgFailure extends Error {
  constructor(readonly sqlState: string, attempts: number, cause: unknown) {
    const message = innermostMessage(cause);
    super(`PostgreSQL refused the transaction with SQLSTATE ${sqlState}${message ? ` (${message})` : ""}${attempts > 1 ? ` after ${attempts} attempts` : ""}`, { cause });
    this.name = "PgFailure";
  }
}

/** The driver's own message, under drizzle's wrapper that quotes the statement. */
function innermostMessage(error: unknown): string | undefined {
  let message: string | undefined;
  inCauses(error, (e) => {
    if (typeof e.errno === "string") message = (e as { message?: unknown }).message as string | undefined;
    return false;
  });
  return typeof message === "string" ? message.slice(0, 200) : undefined;
}

export interface RetryOptions {
  /** Attempts at most (default MAX_ATTEMPTS). */
  attempts?: number;
  /** No attempt starts after this time (performance.now() ms); default: none. */
  deadline?: number;
  /** Called before each retry, with the SQLSTATE (or "LostRace") and the wait. */
  onRetry?(reason: string, attempt: number, waitMs: number): void;
  /** [0, 1); injectable so tests can pin the waits. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `attempt` (one transaction), run again after a jittered wait while it loses races, as long as
 * attempts and the deadline allow. A PostgreSQL error that escapes is a PgFailure naming its SQLSTATE.
 */
export async function retryingLostRaces<T>(attempt: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? MAX_ATTEMPTS;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => Bun.sleep(ms));
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const race = lostRace(error);
      const waitMs = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (n - 1)) * random();
      const late = options.deadline !== undefined && performance.now() + waitMs >= options.deadline;
      if (!race || n >= attempts || late) throw namedPgFailure(error, n);
      options.onRetry?.(sqlStateOf(error) ?? "LostRace", n, waitMs);
      await sleep(waitMs);
    }
  }
}

/**
 * `error` as a PgFailure when it is PostgreSQL's answer (the driver's error, or drizzle's wrapping
 * of it); anything else as it is: an AppError, a DuplicateRecord (whose cause is a 23505), a timeout.
 */
export function namedPgFailure(error: unknown, attempts = 1): unknown {
  const driver = typeof error === "object" && error !== null && typeof (error as { errno?: unknown }).errno === "string";
  if (!(error instanceof DrizzleQueryError) && !driver) return error;
  const state = sqlStateOf(error);
  return state === undefined ? error : new PgFailure(state, attempts, error);
}
