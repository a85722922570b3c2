/** Retention of the analytics tables: pruned workspace by workspace, in batches smaller than a bucket. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { GRANULARITIES, pruneAnalytics, ROLLUP_TABLES, SqliteEventWriter, TOTALS_TABLES, VerificationEventSink } from "../../../src/services/analytics/index.ts";
import { EventTables } from "../../../src/services/analytics/tables.ts";
import { toStored } from "./support.ts";
import { count, event, tempDb, type TempDb } from "./support.ts";

const DAY_MS = 86_400_000;
const now = Date.UTC(2026, 5, 15, 12);
const retention = { raw: 90, minute: 90, hour: 90, day: 365, month: 1095 };
const WORKSPACES = ["ws_a", "ws_b", "ws_c"];
const OLD_KEYS = 30;
const BATCH = 4;

let db: TempDb;
beforeEach(() => { db = tempDb(); });
afterEach(() => { db.close(); });

/**
 * In each workspace, OLD_KEYS keys verified once, 1,200 days ago at the same minute (so each
 * rollup bucket of the workspace holds OLD_KEYS rows, more than a batch), with two outcomes in
 * its totals, and one key verified an hour ago.
 */
async function seed(): Promise<void> {
  const sink = new VerificationEventSink({ writer: new SqliteEventWriter(db.storage) });
  for (const workspaceId of WORKSPACES) {
    for (let k = 0; k < OLD_KEYS; k++) {
      sink.record(event({ workspaceId, keyId: `old_${k}`, timeMs: now - 1200 * DAY_MS, outcome: k % 2 ? "VALID" : "RATE_LIMITED" }));
    }
    sink.record(event({ workspaceId, keyId: "recent", timeMs: now - 3_600_000 }));
  }
  await sink.flush();
}

const remaining = (table: string) => db.storage.sqlite.query<{ workspace_id: string; n: number }, []>(
  `SELECT workspace_id, count(*) AS n FROM ${table} GROUP BY workspace_id ORDER BY workspace_id`).all();

test("a bucket larger than a batch is pruned whole, in every workspace, and the recent rows stay", async () => {
  await seed();
  for (const g of GRANULARITIES) expect(count(db.storage, ROLLUP_TABLES[g])).toBe(WORKSPACES.length * (OLD_KEYS + 1));
  const counts = await pruneAnalytics(db.storage, retention, now, BATCH);
  const rollupRows = WORKSPACES.length * OLD_KEYS;
  // Two outcomes in the old bucket of each workspace's totals.
  const totalsRows = WORKSPACES.length * 2;
  expect(counts).toEqual({
    raw: rollupRows, minute: rollupRows, hour: rollupRows, day: rollupRows, month: rollupRows,
    totals: { minute: totalsRows, hour: totalsRows, day: totalsRows, month: totalsRows }, ratelimits: { minute: 0, hour: 0, day: 0, month: 0 },
  });
  for (const g of GRANULARITIES) {
    for (const table of [ROLLUP_TABLES[g], TOTALS_TABLES[g]]) {
      expect({ table, rows: remaining(table) }).toEqual({ table, rows: WORKSPACES.map((workspace_id) => ({ workspace_id, n: 1 })) });
    }
  }
});

test("the prune yields to the event loop within a bucket, never deleting more than a batch between yields", async () => {
  await seed();
  const table = ROLLUP_TABLES.day;
  const seen: number[] = [];
  let done = false;
  const watch = () => { seen.push(count(db.storage, table)); if (!done) setImmediate(watch); };
  setImmediate(watch);
  await pruneAnalytics(db.storage, retention, now, BATCH);
  done = true;
  const before = WORKSPACES.length * (OLD_KEYS + 1);
  const after = WORKSPACES.length;
  expect(seen[0]).toBe(before);
  expect(seen.at(-1)).toBe(after);
  // Each look from the event loop found at most a batch gone since the last: the 90 old rows,
  // 30 to a bucket, went in steps of at most BATCH.
  const steps = seen.slice(1).map((n, i) => seen[i]! - n);
  expect(Math.max(...steps)).toBeLessThanOrEqual(BATCH);
  expect(steps.filter((s) => s > 0).length).toBeGreaterThanOrEqual((before - after) / BATCH);
});

test("a workspace with nothing past retention loses nothing, while the others are pruned", async () => {
  const sink = new VerificationEventSink({ writer: new SqliteEventWriter(db.storage) });
  sink.record(event({ workspaceId: "ws_new", keyId: "k", timeMs: now - DAY_MS }));
  sink.record(event({ workspaceId: "ws_old", keyId: "k", timeMs: now - 1200 * DAY_MS }));
  sink.record(event({ workspaceId: "ws_zzz", keyId: "k", timeMs: now - 2 * DAY_MS }));
  await sink.flush();
  await pruneAnalytics(db.storage, retention, now, BATCH);
  for (const g of GRANULARITIES) {
    expect(remaining(ROLLUP_TABLES[g])).toEqual([{ workspace_id: "ws_new", n: 1 }, { workspace_id: "ws_zzz", n: 1 }]);
    expect(remaining(TOTALS_TABLES[g])).toEqual([{ workspace_id: "ws_new", n: 1 }, { workspace_id: "ws_zzz", n: 1 }]);
  }
});

test("raw events go by batch row once the row's latest event is past retention, counted as events", async () => {
  const tables = new EventTables(db.storage);
  // Half a minute past `now`, so that the cutoff falls inside a minute.
  const at = now + 30_000;
  const cutoff = at - retention.raw * DAY_MS;
  const minute = Math.floor(cutoff / 60_000) * 60_000;
  // Rows of whole minutes before the cutoff's, the cutoff's own minute (events on both sides of
  // it), and the minute after; in two workspaces, each a row of its own.
  const times = [minute - 120_000, minute - 90_000, minute - 60_000, minute + 1, cutoff - 1, cutoff + 1, minute + 60_000];
  for (const workspaceId of ["ws_a", "ws_b"]) {
    tables.write(times.map((timeMs, i) => toStored(event({ workspaceId, timeMs, keyId: `k${i}` }))));
  }
  const rowsBefore = count(db.storage, "verification_event_batches");
  const counts = await pruneAnalytics(db.storage, retention, at, BATCH);
  expect(counts.raw).toBe(2 * 3);
  expect(count(db.storage, "verification_event_batches")).toBe(rowsBefore - 2 * 2);
  const left = db.storage.sqlite.query<{ workspace_id: string; time: number }, []>(
    "SELECT workspace_id, time FROM verification_events ORDER BY workspace_id, time").all();
  expect(left).toEqual(["ws_a", "ws_b"].flatMap((workspace_id) => times.slice(3).map((time) => ({ workspace_id, time }))));
});

test("minute rows the writer thread never folded (no event came after them) are folded before the minute retention prunes them", async () => {
  const tables = new EventTables(db.storage);
  const old = now - 100 * DAY_MS;
  tables.write([toStored(event({ timeMs: old, keyId: "k", spentCredits: 2 })), toStored(event({ timeMs: old + 1, keyId: "k", spentCredits: 1 }))]);
  expect(db.storage.sqlite.query("SELECT count(*) AS n FROM verification_rollups_minute WHERE folded = 0").get()).toEqual({ n: 1 });
  const counts = await pruneAnalytics(db.storage, retention, now, BATCH);
  expect(counts.minute).toBe(1);
  for (const g of ["hour", "day", "month"]) {
    expect(db.storage.sqlite.query(`SELECT sum("count") AS n, sum(spent_credits) AS c FROM verification_rollups_${g}_all`).get()).toEqual(g === "hour" ? { n: null, c: null } : { n: 2, c: 3 });
  }
});
