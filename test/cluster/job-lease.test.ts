/**
 * Leased runs of scheduled jobs (src/storage/pg/job-lease.ts) against a real PostgreSQL: of
 * claimants racing one tick exactly one wins; a claimant that dies loses its run when its lease
 * ends, and another takes it over; a finished run is never claimed again; ticks and jobs are
 * independent. Each claimant is a node of its own (its own client). Leases are timed by the
 * server's clock, so the expiry check waits on the server for a short lease. One server for the
 * file; a fresh database per test.
 */
import { describe, expect, test } from "bun:test";
import { drizzle } from "drizzle-orm/bun-sql";
import { JobLeases, RUN_RETENTION_MS, type RunLease } from "../../src/storage/pg/job-lease.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { eventually, postgresForFile } from "./pg-database.ts";

/** A scheduled minute of today: within the retention, whatever the day the tests run. */
const TICK_MS = Math.floor(Date.now() / 60_000) * 60_000;
const LONG_LEASE_MS = 60_000;

describe.skipIf(skipWithout(missing.postgres(), "the cluster job leases"))("job leases across nodes", () => {
  const pg = postgresForFile();

  /** `count` nodes on a fresh database, each with a client of its own. */
  async function nodes(count: number): Promise<JobLeases[]> {
    const url = await pg.freshDatabase();
    return Array.from({ length: count }, () => new JobLeases(drizzle({ client: pg.client(url) })));
  }

  /** The server's time now, in Unix ms. */
  const serverNowMs = async () => Number((await pg.admin()`SELECT (extract(epoch from clock_timestamp()) * 1000)::int8::text AS ms`)[0].ms);

  test("of three nodes claiming one tick at once, exactly one runs it (twenty ticks)", async () => {
    const claimants = await nodes(3);
    for (let minute = 0; minute < 20; minute++) {
      const tickMs = TICK_MS + minute * 60_000;
      const claims = await Promise.all(claimants.map((n) => n.claimRun("ratelimit-prune", tickMs, LONG_LEASE_MS)));
      expect({ tickMs, won: claims.filter((c) => c !== undefined).length }).toEqual({ tickMs, won: 1 });
    }
  });

  test("a live lease is not taken over, whether its holder runs or is gone", async () => {
    const [a, b] = await nodes(2);
    const held = await a!.claimRun("audit-prune", TICK_MS, LONG_LEASE_MS);
    expect(held).toBeDefined();
    expect(await b!.claimRun("audit-prune", TICK_MS, LONG_LEASE_MS)).toBeUndefined();
    expect(await a!.claimRun("audit-prune", TICK_MS, LONG_LEASE_MS)).toBeUndefined();
  });

  test("a node that dies holding a run loses it when its lease ends, and another takes the run over and finishes it", async () => {
    const [dead, survivor] = await nodes(2);
    const leaseMs = 300;
    const claimedAtMs = await serverNowMs();
    const lost = await dead!.claimRun("ratelimit-prune", TICK_MS, leaseMs);
    expect(lost).toBeDefined();
    expect(lost!.leaseUntilMs).toBeGreaterThanOrEqual(claimedAtMs + leaseMs);
    expect(await survivor!.claimRun("ratelimit-prune", TICK_MS, leaseMs)).toBeUndefined();
    // The survivor's scheduler asks again until the server's clock passes the dead node's lease.
    const taken = await eventually(() => survivor!.claimRun("ratelimit-prune", TICK_MS, LONG_LEASE_MS), 10_000, "the run taken over");
    expect(await serverNowMs()).toBeGreaterThanOrEqual(lost!.leaseUntilMs);
    // The dead node, back late, can neither renew nor record the run; the survivor records it.
    expect(await lost!.renew(LONG_LEASE_MS)).toBe(false);
    expect(await lost!.finish()).toBe(false);
    expect(await taken.finish()).toBe(true);
  });

  test("a finished run is never claimed again, even after its lease would have ended", async () => {
    const [a, b] = await nodes(2);
    const run = await a!.claimRun("analytics-prune", TICK_MS, 1);
    expect(await run!.finish()).toBe(true);
    // A one-ms lease has ended by the time the server answers again.
    await eventually(async () => (await serverNowMs()) > run!.leaseUntilMs, 5000, "the lease's end passed");
    for (const node of [a!, b!]) expect(await node.claimRun("analytics-prune", TICK_MS, LONG_LEASE_MS)).toBeUndefined();
    expect(await run!.finish()).toBe(false);
  });

  test("a holder that renews keeps its run past the first lease's end", async () => {
    const [a, b] = await nodes(2);
    const run = await a!.claimRun("credit-refill", TICK_MS, 1);
    expect(await run!.renew(LONG_LEASE_MS)).toBe(true);
    expect(run!.leaseUntilMs).toBeGreaterThan((await serverNowMs()) + LONG_LEASE_MS / 2);
    expect(await b!.claimRun("credit-refill", TICK_MS, LONG_LEASE_MS)).toBeUndefined();
  });

  test("different ticks and different jobs are claimed independently", async () => {
    const [a, b, c] = await nodes(3);
    const runs: (RunLease | undefined)[] = await Promise.all([
      a!.claimRun("credit-refill", TICK_MS, LONG_LEASE_MS),
      b!.claimRun("credit-refill", TICK_MS + 86_400_000, LONG_LEASE_MS),
      c!.claimRun("audit-prune", TICK_MS, LONG_LEASE_MS),
    ]);
    expect(runs.map((r) => r !== undefined)).toEqual([true, true, true]);
    await runs[0]!.finish();
    expect(await b!.claimRun("credit-refill", TICK_MS + 2 * 86_400_000, LONG_LEASE_MS)).toBeDefined();
    expect(await c!.claimRun("credit-refill", TICK_MS, LONG_LEASE_MS)).toBeUndefined();
  });

  test("a tick older than the retention is refused: its record may be gone", async () => {
    const [a] = await nodes(1);
    const nowMs = await serverNowMs();
    expect(await a!.claimRun("audit-prune", nowMs - RUN_RETENTION_MS - 60_000, LONG_LEASE_MS)).toBeUndefined();
    expect(await a!.claimRun("audit-prune", nowMs - RUN_RETENTION_MS + 60_000, LONG_LEASE_MS)).toBeDefined();
  });

  test("a job without a name, a fractional tick or a lease that is not a positive integer is refused", async () => {
    const [a] = await nodes(1);
    await expect(a!.claimRun("", TICK_MS, LONG_LEASE_MS)).rejects.toThrow(RangeError);
    await expect(a!.claimRun("audit-prune", TICK_MS + 0.5, LONG_LEASE_MS)).rejects.toThrow(RangeError);
    for (const leaseMs of [0, -1, 1.5]) await expect(a!.claimRun("audit-prune", TICK_MS, leaseMs)).rejects.toThrow(RangeError);
  });
});
