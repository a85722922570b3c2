/**
 * The retry of a PostgreSQL transaction that lost a race (src/storage/pg/retry.ts), with the waits
 * recorded instead of slept and the randomness pinned: which failures are run again, how the waits
 * grow and stay under their cap, that no attempt starts past the deadline, and that what escapes
 * names its SQLSTATE and not the statement or its values.
 */
import { describe, expect, test } from "bun:test";
import { DrizzleQueryError } from "drizzle-orm";
import { DuplicateRecord, LostRace } from "../../src/storage/records/errors.ts";
import { FIRST_BACKOFF_MS, MAX_ATTEMPTS, MAX_BACKOFF_MS, PgFailure, lostRace, retryingLostRaces } from "../../src/storage/pg/retry.ts";

/** drizzle's wrapping of a driver error answering `sqlState`, with a statement and a value in its message. */
function pgError(sqlState: string): DrizzleQueryError {
  const driver = Object.assign(new Error("could not serialize access due to concurrent update"), { code: "ERR_POSTGRES_SERVER_ERROR", errno: sqlState });
  return new DrizzleQueryError(`insert into "keys" ("hash") values ($1)`, ["secret-hash-value"], driver);
}

/** A transaction failing with `failures` in turn, then answering "done"; the attempts made. */
function flaky(failures: unknown[]): { attempt: () => Promise<string>; attempts: () => number } {
  let n = 0;
  return {
    attempt: async () => {
      const failure = failures[n++];
      if (failure !== undefined) throw failure;
      return "done";
    },
    attempts: () => n,
  };
}

describe("retryingLostRaces", () => {
  test("serialization failures, deadlocks, a row deleted underneath (23503) and LostRace are run again; the waits double up to the cap, jittered", async () => {
    const failures = [pgError("40001"), pgError("40P01"), pgError("23503"), new LostRace("test"), pgError("40001"), pgError("40001"), pgError("40001"), pgError("40001")];
    const run = flaky(failures);
    const waits: number[] = [];
    const answer = await retryingLostRaces(run.attempt, { random: () => 0.5, sleep: async (ms) => { waits.push(ms); } });
    expect(answer).toBe("done");
    expect(run.attempts()).toBe(failures.length + 1);
    expect(waits).toEqual(failures.map((_, i) => Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** i) * 0.5));
    const jittered: number[] = [];
    let r = 0;
    await retryingLostRaces(flaky([pgError("40001"), pgError("40001"), pgError("40001")]).attempt, { random: () => [0.1, 0.9, 0.3][r++]!, sleep: async (ms) => { jittered.push(ms); } });
    expect(jittered).toEqual([FIRST_BACKOFF_MS * 0.1, FIRST_BACKOFF_MS * 2 * 0.9, FIRST_BACKOFF_MS * 4 * 0.3]);
  });

  test("anything else escapes at once: a unique violation, a DuplicateRecord, an application error", async () => {
    for (const failure of [pgError("23505"), new DuplicateRecord({ cause: pgError("23505") }), new Error("boom")]) {
      const run = flaky([failure]);
      const escaped = await retryingLostRaces(run.attempt, { sleep: async () => undefined }).catch((e: unknown) => e);
      expect(run.attempts()).toBe(1);
      expect(lostRace(failure)).toBe(false);
      if (failure instanceof DrizzleQueryError) expect(escaped).toBeInstanceOf(PgFailure);
      else expect(escaped).toBe(failure);
    }
  });

  test("gives up after MAX_ATTEMPTS, or when the next wait would pass the deadline, naming the SQLSTATE and not the statement or its values", async () => {
    const always = flaky(Array(100).fill(pgError("40001")));
    const last = (await retryingLostRaces(always.attempt, { sleep: async () => undefined }).catch((e: unknown) => e)) as Error;
    expect(always.attempts()).toBe(MAX_ATTEMPTS);
    expect(last).toBeInstanceOf(PgFailure);
    expect(last.message).toContain("SQLSTATE 40001");
    expect(last.message).toContain(`after ${MAX_ATTEMPTS} attempts`);
    expect(last.message).not.toContain("insert into");
    expect(last.message).not.toContain("secret-hash-value");

    const late = flaky(Array(100).fill(pgError("40P01")));
    const slept: number[] = [];
    const deadline = performance.now() + 50;
    const escaped = (await retryingLostRaces(late.attempt, { deadline, random: () => 1, sleep: async (ms) => { slept.push(ms); await Bun.sleep(ms); } }).catch((e: unknown) => e)) as Error;
    expect(escaped.message).toContain("SQLSTATE 40P01");
    expect(performance.now()).toBeLessThan(deadline + MAX_BACKOFF_MS);
    // 4 + 8 + 16 = 28 ms fit before the deadline; the next wait (32 ms) would not.
    expect(late.attempts()).toBeLessThan(MAX_ATTEMPTS);
    expect(slept.reduce((a, b) => a + b, 0)).toBeLessThan(50);
  });
});
