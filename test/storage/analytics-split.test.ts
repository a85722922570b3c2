/**
 * The analytics tables in a file of their own (src/storage/data-dir.ts): a data dir whose
 * tollgate.db still holds them (migrated up to 0008) keeps every row, now in analytics.db, with the
 * same schema as a new analytics.db; an interrupted move and an older tollgate.db restored beside
 * a newer analytics.db neither duplicate nor overwrite anything.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Database } from "bun:sqlite";
import { getTableName } from "drizzle-orm";
import { openDataStores, SPLIT_MIGRATION, type DataStores } from "../../src/storage/data-dir.ts";
import type { Storage } from "../../src/storage/db.ts";
import { JOURNAL_TAGS } from "../../src/storage/migrations.ts";
import { ANALYTICS_TABLES, verificationEventBatches } from "../../src/storage/schema/index.ts";
import { EventTables } from "../../src/services/analytics/tables.ts";
import { RollupFolder } from "../../src/services/analytics/fold.ts";
import { toStored } from "../services/analytics/support.ts";
import { event } from "../services/analytics/support.ts";
import { databasesBefore, eventTablesBefore } from "./support.ts";

const TABLES = ANALYTICS_TABLES.map((t) => getTableName(t));
const VIEWS_AND_TRIGGERS = ["verification_events", "verification_rollups_hour_all", "verification_rollups_day_all", "verification_rollups_month_all", "verification_rollups_minute_refold"];
const MINUTE = 60_000;
const START = Date.UTC(2026, 2, 15, 12, 0, 0);

const databases = databasesBefore(SPLIT_MIGRATION);
/** tollgate.db's migrations after the split, which a start applies with it. */
const AFTER_SPLIT = JOURNAL_TAGS.slice(JOURNAL_TAGS.indexOf(SPLIT_MIGRATION) + 1);
const opened: DataStores[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const o of opened.splice(0)) o.close();
  databases.removeAll();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** 600 events over 3 keys and 2 workspaces across 20 minutes, written and partly folded as the old writer did (or by `tables`), in `s`. */
function writeEvents(s: Storage, from = START, tables = eventTablesBefore(s)): void {
  for (let chunk = 0; chunk < 6; chunk++) {
    tables.write(Array.from({ length: 100 }, (_, i) => toStored(event({
      timeMs: from + (chunk * 100 + i) * 2000, workspaceId: i % 2 ? "ws_a" : "ws_b", keyId: `key_${i % 3}`,
      outcome: i % 7 ? "VALID" : "RATE_LIMITED", spentCredits: i % 4, latencyMs: (i % 5) / 2, tags: i % 3 ? [] : ["path=/v1"],
    }))));
  }
  // The first ten minutes folded into hours, days and months; the rest still minute rows only.
  new RollupFolder(s).foldAll(from + 10 * MINUTE);
}

/** Every row of every analytics table, in primary-key order, and what the views read. */
function contents(sqlite: Database) {
  return {
    tables: Object.fromEntries(TABLES.map((t) => [t, sqlite.query(`SELECT * FROM ${t} ORDER BY 1, 2, 3, 4`).all()])),
    events: sqlite.query("SELECT * FROM verification_events ORDER BY batch_id, position").all(),
    days: sqlite.query('SELECT time, key_id, outcome, sum("count") AS n FROM verification_rollups_day_all GROUP BY 1, 2, 3 ORDER BY 1, 2, 3').all(),
  };
}

/** `contents` of a tollgate.db from before the split, as they read once moved: the raw rows marked as of the first layout. */
function moved(before: ReturnType<typeof contents>): ReturnType<typeof contents> {
  const raw = getTableName(verificationEventBatches);
  const rows = before.tables[raw]!.map((row) => ({ ...(row as object), layout: 1, key_space_id: "" }));
  return { ...before, tables: { ...before.tables, [raw]: rows } };
}

const schemaOf = (sqlite: Database) =>
  sqlite.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY type, name").all();
const namesIn = (sqlite: Database, names: string[]) =>
  sqlite.query<{ name: string }, []>(`SELECT name FROM sqlite_master WHERE name IN (${names.map((n) => `'${n}'`).join(", ")}) ORDER BY name`).all().map((r) => r.name);

function open(dir: string): DataStores {
  const stores = openDataStores(dir);
  opened.push(stores);
  return stores;
}

describe("a data dir from before analytics.db", () => {
  test("every analytics row moves to analytics.db, where the views and the refold trigger read and keep them alike", () => {
    const old = databases.open();
    writeEvents(old);
    const before = contents(old.sqlite);
    expect(before.events.length).toBe(600);
    const dir = dirname(old.sqlite.filename);
    old.close();

    const { storage, analytics, applied } = open(dir);
    expect(applied).toEqual(["analytics/0000_analytics", "analytics/0001_raw_events_slim", "analytics/0002_ratelimit_decisions", SPLIT_MIGRATION, ...AFTER_SPLIT]);
    expect(contents(analytics.sqlite)).toEqual(moved(before));
    expect(namesIn(storage.sqlite, [...TABLES, ...VIEWS_AND_TRIGGERS])).toEqual([]);
    for (const db of [storage, analytics]) expect(db.sqlite.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });

    // The writer and the fold go on from the moved rows: a late event in a folded minute reaches its day through the trigger.
    new EventTables(analytics).write([toStored(event({ timeMs: START + 1000, workspaceId: "ws_a", keyId: "key_0" }))]);
    new RollupFolder(analytics).foldAll(START + 60 * MINUTE);
    const day = analytics.sqlite.query<{ n: number }, []>('SELECT sum("count") AS n FROM verification_rollups_day').get()!.n;
    expect(day).toBe(601);
  });

  test("the moved schema is the schema of a new analytics.db", () => {
    const old = databases.open();
    writeEvents(old);
    const dir = dirname(old.sqlite.filename);
    old.close();
    const moved = open(dir).analytics;
    const freshDir = mkdtempSync(join(tmpdir(), "tollgate-split-fresh-"));
    dirs.push(freshDir);
    const fresh = open(freshDir);
    expect(schemaOf(moved.sqlite)).toEqual(schemaOf(fresh.analytics.sqlite));
    expect(namesIn(fresh.storage.sqlite, [...TABLES, ...VIEWS_AND_TRIGGERS])).toEqual([]);
    expect(namesIn(fresh.analytics.sqlite, [...TABLES, ...VIEWS_AND_TRIGGERS])).toEqual([...TABLES, ...VIEWS_AND_TRIGGERS].sort());
  });

  test("interrupted after the copy, before tollgate.db dropped its tables: the next start only drops, nothing is doubled", () => {
    const old = databases.open();
    writeEvents(old);
    const before = contents(old.sqlite);
    const dir = dirname(old.sqlite.filename);
    old.close();
    // The copy committed in analytics.db; tollgate.db as it was (the state a crash there leaves).
    const copy = join(dir, "tollgate.db.before-split");
    const keep = new Database(join(dir, "tollgate.db"));
    keep.run("VACUUM INTO ?", [copy]);
    keep.close();
    open(dir);
    for (const o of opened.splice(0)) o.close();
    for (const suffix of ["-wal", "-shm"]) rmSync(join(dir, `tollgate.db${suffix}`), { force: true });
    renameSync(copy, join(dir, "tollgate.db"));

    const { storage, analytics, applied } = open(dir);
    expect(applied).toEqual([SPLIT_MIGRATION, ...AFTER_SPLIT]);
    expect(contents(analytics.sqlite)).toEqual(moved(before));
    expect(namesIn(storage.sqlite, TABLES)).toEqual([]);
  });

  test("an older tollgate.db restored beside a newer analytics.db: analytics.db keeps what it has", () => {
    const old = databases.open();
    writeEvents(old);
    const dir = dirname(old.sqlite.filename);
    old.close();
    // A newer analytics.db with other events (written after a move), then the old tollgate.db put back.
    const newerDir = mkdtempSync(join(tmpdir(), "tollgate-split-newer-"));
    dirs.push(newerDir);
    const newer = open(newerDir);
    writeEvents(newer.analytics, START + 3_600_000, new EventTables(newer.analytics));
    const newerContents = contents(newer.analytics.sqlite);
    newer.analytics.sqlite.run("VACUUM INTO ?", [join(dir, "analytics.db")]);
    expect(existsSync(join(dir, "analytics.db"))).toBe(true);

    const { storage, analytics } = open(dir);
    expect(contents(analytics.sqlite)).toEqual(newerContents);
    expect(namesIn(storage.sqlite, TABLES)).toEqual([]);
  });
});
