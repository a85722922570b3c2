/**
 * Folding minute rollups into the hour, day and month rollups (fold.ts, migration 0008): at every
 * step, folded or not, late or not, each rollup as the queries read it equals the events written.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { FOLD_GRACE_MS, foldableBefore, RollupFolder } from "../../../src/services/analytics/fold.ts";
import { aggregate, WorkerEventWriter, type Granularity } from "../../../src/services/analytics/index.ts";
import { EventTables } from "../../../src/services/analytics/tables.ts";
import type { StoredEvent } from "../../../src/services/analytics/types.ts";
import { toStored } from "./support.ts";
import { event, fromStored, rollupRows, tempDb, type TempDb } from "./support.ts";
import { packEvents } from "./support.ts";

const MINUTE = 60_000;
const M = Date.UTC(2026, 0, 31, 23, 58);
const COARSER: Granularity[] = ["hour", "day", "month"];

let db: TempDb;
let tables: EventTables;
let folder: RollupFolder;
let written: StoredEvent[];
beforeEach(() => {
  db = tempDb();
  tables = new EventTables(db.storage);
  folder = new RollupFolder(db.storage);
  written = [];
});
afterEach(() => { db.close(); });

function write(events: StoredEvent[]): void {
  tables.write(events);
  written.push(...events);
}

/** `n` events from `from`, every `stepMs`, over 6 keys, 2 outcomes, tags and credits: across the month's last minutes and into the next. */
const events = (n: number, from: number, stepMs: number) => Array.from({ length: n }, (_, i) => toStored(event({
  timeMs: from + i * stepMs, keyId: `key_${i % 6}`, outcome: i % 4 ? "VALID" : "RATE_LIMITED", tags: i % 3 ? [] : ["a"],
  spentCredits: i % 3, latencyMs: (i % 7) / 2, identityId: i % 2 ? "id_1" : "", externalId: i % 2 ? "acme" : "",
})));

/** Each rollup as read, against the events written aggregated directly. */
function expectExact(): void {
  for (const g of ["minute", ...COARSER] as Granularity[]) {
    const want = aggregate(written, g).map((r) => ({
      time: r.time, key_id: r.keyId, identity_id: r.identityId, outcome: r.outcome, tags: r.tags,
      count: r.count, spent_credits: r.spentCredits, latency_sum_ms: r.latencySumMs, latency_max_ms: r.latencyMaxMs,
    }));
    const got = rollupRows(db.storage, g).map(({ time, key_id, identity_id, outcome, tags, count, spent_credits, latency_sum_ms, latency_max_ms }) =>
      ({ time, key_id, identity_id, outcome, tags, count, spent_credits, latency_sum_ms, latency_max_ms }));
    const order = (rows: typeof want) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect({ g, rows: order(got) }).toEqual({ g, rows: order(want) });
  }
}

const unfolded = () => db.storage.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM verification_rollups_minute WHERE folded = 0").get()!.n;
const physical = (g: Granularity) => db.storage.sqlite.query<{ n: number | null }, []>(`SELECT sum("count") AS n FROM verification_rollups_${g}`).get()!.n ?? 0;

describe("foldableBefore", () => {
  test("the minutes that ended FOLD_GRACE_MS before the newest event", () => {
    expect(foldableBefore(M + FOLD_GRACE_MS - 1)).toBe(M - MINUTE);
    expect(foldableBefore(M + FOLD_GRACE_MS)).toBe(M);
    expect(foldableBefore(M + MINUTE + FOLD_GRACE_MS - 1)).toBe(M);
  });
});

describe("RollupFolder", () => {
  test("new minute rows are unfolded and read through the views; folding slice by slice moves them, exact at every step", () => {
    write(events(240, M, 1000));
    expect(COARSER.map(physical)).toEqual([0, 0, 0]);
    const before = unfolded();
    expect(before).toBeGreaterThan(30);
    expectExact();
    let steps = 0;
    while (folder.foldSlice(Number.MAX_SAFE_INTEGER, 7) > 0) {
      steps++;
      expectExact();
    }
    expect(steps).toBe(Math.ceil(before / 7));
    expect(unfolded()).toBe(0);
    expect(COARSER.map(physical)).toEqual([240, 240, 240]);
  });

  test("only minutes before the bound are folded", () => {
    write(events(240, M, 1000));
    expect(folder.foldAll(M + 2 * MINUTE)).toBeGreaterThan(0);
    const left = db.storage.sqlite.query<{ time: number }, []>("SELECT DISTINCT time FROM verification_rollups_minute WHERE folded = 0 ORDER BY time").all();
    expect(left.map((r) => r.time)).toEqual([M + 2 * MINUTE, M + 3 * MINUTE]);
    expect(physical("hour")).toBe(120);
    expectExact();
  });

  test("a late event on a folded row passes its difference on; a late new row waits for the next fold", () => {
    write(events(240, M, 1000));
    folder.foldAll(Number.MAX_SAFE_INTEGER);
    // The same keys in minutes already folded (updates), and a new key there (a new row).
    write(events(30, M + 500, 2000));
    write([toStored(event({ timeMs: M + 30_000, keyId: "key_new", spentCredits: 5, latencyMs: 99 }))]);
    expect(unfolded()).toBe(1);
    expectExact();
    expect(COARSER.map(physical)).toEqual([270, 270, 270]);
    folder.foldAll(Number.MAX_SAFE_INTEGER);
    expect(unfolded()).toBe(0);
    expectExact();
  });

  test("a slice that fails changes nothing: its rows stay unfolded and the reads stay exact", () => {
    write(events(240, M, 1000));
    db.storage.sqlite.run("ALTER TABLE verification_rollups_month RENAME TO away");
    expect(() => folder.foldSlice(Number.MAX_SAFE_INTEGER, 1000)).toThrow();
    db.storage.sqlite.run("ALTER TABLE away RENAME TO verification_rollups_month");
    expect(COARSER.map(physical)).toEqual([0, 0, 0]);
    expectExact();
    folder.foldAll(Number.MAX_SAFE_INTEGER);
    expectExact();
  });
});

test("the writer thread folds the minutes that ended before the newest event it wrote, and leaves the others to the views", async () => {
  const writer = new WorkerEventWriter(db.storage.sqlite.filename);
  try {
    const first = events(200, M, 1000).map(fromStored);
    await writer.write(packEvents(first));
    // The worker folds after answering a write, and takes messages one at a time: once a second
    // write is answered, the first one's fold is done.
    await writer.write(packEvents([]));
    written.push(...events(200, M, 1000));
    // The newest event is at M + 3 min 19 s: the minutes before M + 3 min are folded, that one is not.
    const left = db.storage.sqlite.query<{ time: number }, []>("SELECT DISTINCT time FROM verification_rollups_minute WHERE folded = 0 ORDER BY time").all();
    expect(left.map((r) => r.time)).toEqual([M + 3 * MINUTE]);
    expect(physical("day")).toBe(180);
    expectExact();
  } finally {
    await writer.close();
  }
});
