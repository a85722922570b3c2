import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { analyticsDbPruneJob, runAnalyticsFlushOnce, runAnalyticsPruneOnce, startAnalyticsPipeline, type Every } from "../../src/jobs/analytics.ts";
import { createLogger, silentLogger } from "../../src/lib/logger.ts";
import { SqliteEventWriter, VerificationEventSink } from "../../src/services/analytics/index.ts";
import { TestClock } from "../support/test-clock.ts";
import { count, event, tempDb, type TempDb } from "../services/analytics/support.ts";

const DAY_MS = 86_400_000;
const TABLES = {
  raw: "verification_events", minute: "verification_rollups_minute", hour: "verification_rollups_hour",
  day: "verification_rollups_day", month: "verification_rollups_month", dayTotals: "verification_totals_day", monthTotals: "verification_totals_month",
} as const;

let db: TempDb;
beforeEach(() => { db = tempDb(); });
afterEach(() => { db.close(); });

const sinkOf = () => new VerificationEventSink({ writer: new SqliteEventWriter(db.storage) });

/** A timer the test fires by hand: records the interval asked for. */
function manualTimer(): Every & { ms?: number; fire(): Promise<void>; stopped: boolean } {
  const timer = Object.assign((ms: number, run: () => Promise<void>) => {
    timer.ms = ms;
    timer.fire = run;
    return () => { timer.stopped = true; };
  }, { ms: undefined as number | undefined, fire: async () => {}, stopped: false });
  return timer;
}

describe("the periodic flush", () => {
  test("runs every analyticsFlushMs and writes what was buffered; flushAndStop stops it and writes the rest", async () => {
    const events = sinkOf();
    const timer = manualTimer();
    const pipeline = startAnalyticsPipeline(
      { events },
      { logger: silentLogger, flushMs: 250, every: timer },
    );
    expect(timer.ms).toBe(250);
    events.record(event());
    events.record(event());
    expect(count(db.storage, TABLES.raw)).toBe(0);
    await timer.fire();
    expect(count(db.storage, TABLES.raw)).toBe(2);
    events.record(event());
    await pipeline.flushAndStop();
    expect(timer.stopped).toBe(true);
    expect(count(db.storage, TABLES.raw)).toBe(3);
  });

  test("a failed flush is logged and retried by the next one, with nothing lost", async () => {
    const events = sinkOf();
    const timer = manualTimer();
    const lines: string[] = [];
    startAnalyticsPipeline(
      { events },
      { logger: createLogger("error", (l) => lines.push(l)), flushMs: 1000, every: timer },
    );
    events.record(event());
    db.storage.sqlite.run("ALTER TABLE verification_event_batches RENAME TO away");
    await timer.fire();
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["verification event flush failed; retrying with the next flush"]);
    db.storage.sqlite.run("ALTER TABLE away RENAME TO verification_event_batches");
    await timer.fire();
    expect(count(db.storage, TABLES.raw)).toBe(1);
  });

  test("a tick that is still writing is not overlapped by the next one", async () => {
    let release = () => {};
    let writes = 0;
    const events = new VerificationEventSink({
      writer: { write: () => { writes++; return new Promise<void>((resolve) => { release = resolve; }); }, close: async () => {} },
    });
    const timer = manualTimer();
    startAnalyticsPipeline(
      { events },
      { logger: silentLogger, flushMs: 1000, every: timer },
    );
    events.record(event());
    const first = timer.fire();
    events.record(event());
    await timer.fire();
    expect(writes).toBe(1);
    release();
    await first;
    const third = timer.fire();
    expect(writes).toBe(2);
    release();
    await third;
  });

  test("runAnalyticsFlushOnce flushes the sink", async () => {
    const events = sinkOf();
    events.record(event());
    expect(await runAnalyticsFlushOnce({ events })).toBe(1);
    expect(await runAnalyticsFlushOnce({ events })).toBe(0);
  });
});

describe("retention prune", () => {
  const now = Date.UTC(2026, 5, 15, 12);
  const retentionDays = { raw: 90, minute: 90, hour: 90, day: 365, month: 1095 };

  /** One event at each age (days before `now`, plus `extraMs`), flushed into every table. */
  async function seed(ages: number[], extraMs = 0): Promise<void> {
    const events = sinkOf();
    ages.forEach((days, i) => events.record(event({ timeMs: now - days * DAY_MS - extraMs, keyId: `key_${i}` })));
    await events.flush();
  }
  const times = (table: string) => db.storage.sqlite.query<{ time: number }, []>(`SELECT time FROM ${table} ORDER BY time`).all().map((r) => r.time);

  test("each table keeps exactly its retention, by the clock's time; a rollup bucket goes once it is wholly past", async () => {
    await seed([0, 89, 91, 364, 366, 1094, 1200]);
    const counts = await runAnalyticsPruneOnce({ storage: db.storage, retentionDays }, now);
    expect(counts).toEqual({ raw: 5, minute: 5, hour: 5, day: 3, month: 1, totals: { minute: 5, hour: 5, day: 3, month: 1 }, ratelimits: { minute: 0, hour: 0, day: 0, month: 0 } });
    const cutoff = (days: number) => now - days * DAY_MS;
    expect(times(TABLES.raw).every((t) => t >= cutoff(90))).toBe(true);
    expect(times(TABLES.raw)).toHaveLength(2);
    expect(times(TABLES.day)).toHaveLength(4);
    // Totals keep the same buckets as their rollups (one key space and outcome here).
    expect(times(TABLES.dayTotals)).toEqual([...new Set(times(TABLES.day))]);
    expect(times(TABLES.monthTotals)).toEqual([...new Set(times(TABLES.month))]);
    // The 1094-day-old event's month began more than 1095 days ago, but part of it is within retention.
    expect(times(TABLES.month)).toEqual([Date.UTC(2023, 5, 1), Date.UTC(2025, 5, 1), Date.UTC(2025, 5, 1), Date.UTC(2026, 2, 1), Date.UTC(2026, 2, 1), Date.UTC(2026, 5, 1)]);
  });

  test("the boundary: a row exactly at the cutoff stays, one millisecond older goes", async () => {
    await seed([90, 90], 0);
    await seed([90], 1);
    const counts = await runAnalyticsPruneOnce({ storage: db.storage, retentionDays }, now);
    expect(counts.raw).toBe(1);
    expect(count(db.storage, TABLES.raw)).toBe(2);
  });

  test("the scheduler's daily job prunes at the clock's time", async () => {
    await seed([89, 100]);
    const job = analyticsDbPruneJob({ storage: db.storage, retentionDays }, new TestClock(now));
    expect(job.pattern).toBe("20 0 * * *");
    await job.run(0);
    expect(count(db.storage, TABLES.raw)).toBe(1);
  });

  test("deletes in batches until nothing old is left", async () => {
    const { pruneAnalytics } = await import("../../src/services/analytics/index.ts");
    await seed(Array.from({ length: 25 }, () => 100));
    const counts = await pruneAnalytics(db.storage, retentionDays, now, 4);
    expect(counts.raw).toBe(25);
    expect(count(db.storage, TABLES.raw)).toBe(0);
  });

  test("raw events are pruned in every workspace, and only past the cutoff", async () => {
    const { pruneAnalytics } = await import("../../src/services/analytics/index.ts");
    const events = sinkOf();
    for (const workspaceId of ["ws_a", "ws_b", "ws_c"]) {
      for (let i = 0; i < 5; i++) events.record(event({ workspaceId, timeMs: now - 100 * DAY_MS + i, keyId: `old_${i}` }));
      events.record(event({ workspaceId, timeMs: now - DAY_MS, keyId: "recent" }));
    }
    await events.flush();
    const counts = await pruneAnalytics(db.storage, retentionDays, now, 2);
    expect(counts.raw).toBe(15);
    expect(db.storage.sqlite.query<{ workspace_id: string; key_id: string }, []>(`SELECT workspace_id, key_id FROM ${TABLES.raw} ORDER BY workspace_id`).all())
      .toEqual(["ws_a", "ws_b", "ws_c"].map((workspace_id) => ({ workspace_id, key_id: "recent" })));
  });
});
