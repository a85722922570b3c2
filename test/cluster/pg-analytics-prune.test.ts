/**
 * The cluster's analytics retention (src/services/analytics/pg-retention.ts) against a real
 * PostgreSQL: each table loses exactly its rows before its own cutoff (retention.ts'
 * `retentionCutoffs`: raw events by time, each granularity's rollups, totals and rate-limit
 * decisions by whole buckets), in batches smaller than a table; and as the leased job of three
 * nodes firing the same tick, it runs once. One server for the file; a fresh database per test.
 */
import { describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import { GRANULARITIES, PgEventWriter, prunePgAnalytics, retentionCutoffs } from "../../src/services/analytics/index.ts";
import { analyticsPruneJob } from "../../src/jobs/analytics.ts";
import { leasedJob } from "../../src/jobs/leased.ts";
import { JobLeases, leaseClaims } from "../../src/storage/pg/job-lease.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { TestClock } from "../support/test-clock.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { makeEvents, pack } from "./analytics-events.ts";
import { postgresForFile } from "./pg-database.ts";

const DAY_MS = 86_400_000;
const NOW_MS = Date.UTC(2026, 5, 15, 12, 34, 56);
const RETENTION = { raw: 2, minute: 3, hour: 10, day: 40, month: 400 };
/** Days before NOW_MS events are written at: on both sides of every cutoff. */
const AGES_DAYS = [0.5, 1.9, 2.1, 2.99, 3.01, 9, 11, 39, 41, 200, 399, 401, 700];

/** Table → rows per time, Unix ms. */
async function timesOf(sql: SQL, table: string): Promise<number[]> {
  return (await sql.unsafe(`SELECT "time"::text AS t FROM analytics.${table}`)).map((r: { t: string }) => Number(r.t));
}

const TABLES = ["verification_events", ...GRANULARITIES.flatMap((g) => [`verification_rollups_${g}`, `verification_totals_${g}`, `ratelimit_decisions_${g}`])];

/** The cutoff that applies to `table`. */
function cutoffOf(table: string): number {
  const cutoffs = retentionCutoffs(RETENTION, NOW_MS);
  if (table === "verification_events") return cutoffs.raw;
  return cutoffs[GRANULARITIES.find((g) => table.endsWith(`_${g}`))!];
}

/** Events and decisions at every age of AGES_DAYS. */
async function seed(sql: SQL): Promise<void> {
  const writer = new PgEventWriter(sql);
  for (const [i, days] of AGES_DAYS.entries()) {
    const shift = NOW_MS - days * DAY_MS - Date.UTC(2026, 0, 31, 23, 30);
    const events = makeEvents(40, i, 30 * 60_000).map((e) => ({ ...e, timeMs: Math.round(e.timeMs + shift) }));
    await writer.write(pack(events));
    const minuteMs = Math.floor((NOW_MS - days * DAY_MS) / 60_000) * 60_000;
    await writer.writeRatelimitDecisions([
      { workspaceId: "ws_a", namespaceId: "ns_1", minuteMs, passed: 3, blocked: 1 },
      { workspaceId: "ws_b", namespaceId: "ns_2", minuteMs, passed: 1, blocked: 0 },
    ]);
  }
  await writer.close();
}

describe.skipIf(skipWithout(missing.postgres(), "the cluster's analytics retention"))("pruning the analytics tables in PostgreSQL", () => {
  const pg = postgresForFile();

  test("each table keeps exactly its rows from its own cutoff on, deleted in batches smaller than the table", async () => {
    const sql = pg.client(await pg.freshDatabase());
    await seed(sql);
    const before = new Map<string, number[]>();
    for (const table of TABLES) before.set(table, await timesOf(sql, table));
    const counts = await prunePgAnalytics(sql, RETENTION, NOW_MS, 7);
    for (const table of TABLES) {
      const cutoff = cutoffOf(table);
      const kept = before.get(table)!.filter((t) => t >= cutoff).sort();
      const gone = before.get(table)!.length - kept.length;
      expect({ table, kept: (await timesOf(sql, table)).sort() }).toEqual({ table, kept });
      expect({ table, gone }).toEqual({ table, gone: table === "verification_events" ? counts.raw : deletedOf(counts, table) });
      // Every table has rows on both sides of its cutoff, so both the delete and the keep are tested.
      expect({ table, bothSides: gone > 0 && kept.length > 0 }).toEqual({ table, bothSides: true });
    }
    expect(await prunePgAnalytics(sql, RETENTION, NOW_MS, 7)).toMatchObject({ raw: 0, minute: 0, month: 0 });
  });

  test("a bucket that holds the cutoff stays whole", async () => {
    const sql = pg.client(await pg.freshDatabase());
    await seed(sql);
    await prunePgAnalytics(sql, RETENTION, NOW_MS);
    const cutoffs = retentionCutoffs(RETENTION, NOW_MS);
    // The month of NOW_MS - 400 days began before it: that month's rows are kept.
    expect(cutoffs.month).toBeLessThan(NOW_MS - RETENTION.month * DAY_MS);
    expect(Math.min(...await timesOf(sql, "verification_rollups_month"))).toBe(cutoffs.month);
  });

  test("three nodes firing the leased job for the same tick: one runs the prune, once", async () => {
    const url = await pg.freshDatabase();
    await seed(pg.client(url));
    const clock = new TestClock(NOW_MS);
    const logger = createLogger("error", () => {});
    const runs: number[] = [];
    const jobs = Array.from({ length: 3 }, (_, node) => {
      const sql = pg.client(url);
      const prune = async (nowMs: number) => {
        runs.push(node);
        return prunePgAnalytics(sql, RETENTION, nowMs);
      };
      return leasedJob(analyticsPruneJob(prune, clock), leaseClaims(new JobLeases(drizzle({ client: sql })), 60_000), logger);
    });
    // A tick of today by the server's clock (older runs are past the leases' own retention); the prune's time is the clock's.
    const tickMs = Math.floor(Date.now() / 60_000) * 60_000;
    await Promise.all(jobs.map((job) => job.run(tickMs)));
    expect(runs.length).toBe(1);
    const sql = pg.client(url);
    expect(Math.min(...await timesOf(sql, "verification_events"))).toBeGreaterThanOrEqual(retentionCutoffs(RETENTION, NOW_MS).raw);
    // The next tick is a run of its own.
    await Promise.all(jobs.map((job) => job.run(tickMs + 60_000)));
    expect(runs.length).toBe(2);
  });
});

function deletedOf(counts: Awaited<ReturnType<typeof prunePgAnalytics>>, table: string): number {
  const g = GRANULARITIES.find((x) => table.endsWith(`_${x}`))!;
  if (table.startsWith("verification_rollups_")) return counts[g];
  if (table.startsWith("verification_totals_")) return counts.totals[g];
  return counts.ratelimits[g];
}
