/** Upgrading a database that already holds rollups and totals to the WITHOUT ROWID layout (0006). */
import { afterEach, expect, test } from "bun:test";
import type { Storage } from "../../src/storage/db.ts";
import { applyMigrations } from "../../src/storage/migrate.ts";
import { MIGRATIONS } from "../../src/storage/migrations.ts";
import { aggregate, GRANULARITIES, ROLLUP_TABLES, TOTALS_TABLES, totalsOf } from "../../src/services/analytics/index.ts";
import { RollupFolder } from "../../src/services/analytics/fold.ts";
import type { StoredEvent } from "../../src/services/analytics/types.ts";
import { databasesBefore, eventTablesBefore, migrationIndex, UNTIL_SPLIT } from "./support.ts";

const BEFORE_0006 = migrationIndex("0006_rollups_without_rowid");
const TABLES = GRANULARITIES.flatMap((g) => [ROLLUP_TABLES[g], TOTALS_TABLES[g]]);
const ROLLUP_PK = "workspace_id, time, key_space_id, key_id, identity_id, outcome, tags";
const TOTALS_PK = "workspace_id, time, key_space_id, outcome";
const DAY_MS = 86_400_000;

const databases = databasesBefore("0006_rollups_without_rowid");
afterEach(() => databases.removeAll());
const oldLayoutDb = (): Storage => databases.open();


/** 3,000 events over 3 workspaces, 2 key spaces, 50 keys, identities, tags, outcomes and 40 days. */
const start = Date.UTC(2026, 0, 1);
const events: StoredEvent[] = Array.from({ length: 3000 }, (_, i) => ({
  requestId: `req_${i}`, timeMs: start + (i % 40) * DAY_MS + (i % 7) * 61_000,
  workspaceId: `ws_${i % 3}`, keySpaceId: `ks_${i % 2}`, keyId: `key_${i % 50}`,
  identityId: i % 5 === 0 ? `id_${i % 4}` : "", externalId: i % 5 === 0 ? `ext_${i % 4}` : "",
  outcome: i % 11 === 0 ? "RATE_LIMITED" : "VALID", tags: i % 3 === 0 ? `["path:/v${i % 2}"]` : "[]",
  spentCredits: i % 4, latencyMs: (i % 9) / 4,
}));

/** The events' rollup and totals rows, inserted as the writer of that layout left them. */
function writeOldRollups(s: Storage): void {
  s.sqlite.transaction(() => {
    for (const g of GRANULARITIES) {
      const rows = aggregate(events, g);
      const rollup = s.sqlite.prepare(`INSERT INTO ${ROLLUP_TABLES[g]} (time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, "count", spent_credits, latency_sum_ms, latency_max_ms)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      for (const r of rows) rollup.run(r.time, r.workspaceId, r.keySpaceId, r.keyId, r.identityId, r.externalId, r.outcome, r.tags, r.count, r.spentCredits, r.latencySumMs, r.latencyMaxMs);
      const total = s.sqlite.prepare(`INSERT INTO ${TOTALS_TABLES[g]} (time, workspace_id, key_space_id, outcome, "count", spent_credits) VALUES (?, ?, ?, ?, ?, ?)`);
      for (const t of totalsOf(rows)) total.run(t.time, t.workspaceId, t.keySpaceId, t.outcome, t.count, t.spentCredits);
    }
  })();
}

/** The events written by today's writer, and folded into every rollup. */
function writeEvents(s: Storage): void {
  const tables = eventTablesBefore(s);
  for (let i = 0; i < events.length; i += 1000) tables.write(events.slice(i, i + 1000));
  new RollupFolder(s).foldAll(Number.MAX_SAFE_INTEGER);
}

const pkOf = (table: string) => (table.includes("rollups") ? ROLLUP_PK : TOTALS_PK);
const rowsOf = (s: Storage, table: string) => s.sqlite.query(`SELECT * FROM ${table} ORDER BY ${pkOf(table)}`).all();
const sumsOf = (s: Storage, table: string) => s.sqlite.query<Record<string, number>, []>(
  `SELECT count(*) AS n, sum(count) AS count, sum(spent_credits) AS credits FROM ${table}`).get()!;
const sqlOf = (s: Storage, name: string) => s.sqlite.query<{ sql: string }, [string]>(`SELECT sql FROM sqlite_master WHERE name = ?1`).get(name)?.sql;
const indexesOf = (s: Storage, table: string) => s.sqlite.query<{ name: string }, [string]>(
  `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1`).all(table).map((r) => r.name);

test("0006 makes the rollups and totals WITHOUT ROWID, without their time indexes, and keeps every row", () => {
  const s = oldLayoutDb();
  try {
    writeOldRollups(s);
    const before = Object.fromEntries(TABLES.map((t) => [t, { rows: rowsOf(s, t), sums: sumsOf(s, t) }]));
    for (const t of TABLES) {
      expect(sqlOf(s, t)).not.toContain("WITHOUT ROWID");
      expect(indexesOf(s, t)).toContain(`${t}_time_idx`);
    }
    // Every rollup holds all 3,000 events, spread over many rows.
    expect(before[ROLLUP_TABLES.minute]!.sums.count).toBe(3000);
    expect(before[ROLLUP_TABLES.minute]!.sums.n).toBeGreaterThan(1000);

    expect(applyMigrations(s.sqlite, MIGRATIONS.slice(0, BEFORE_0006 + 1))).toEqual(["0006_rollups_without_rowid"]);

    for (const t of TABLES) {
      expect(sqlOf(s, t)).toMatch(/\) WITHOUT ROWID$/);
      expect(indexesOf(s, t)).toEqual([]);
      expect(() => s.sqlite.query(`SELECT rowid FROM ${t}`).all()).toThrow(/no such column: rowid/);
      expect({ table: t, rows: rowsOf(s, t), sums: sumsOf(s, t) }).toEqual({ table: t, ...before[t]! });
    }
    expect(s.sqlite.query(`SELECT name FROM sqlite_master WHERE name LIKE '__new_%'`).all()).toEqual([]);
    expect(s.sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check).toBe("ok");

    // Today's writer and fold, after the later migrations, still add to the copied rows; 0008
    // takes the minute rows written before it as folded, so the views count each event once.
    applyMigrations(s.sqlite, MIGRATIONS, UNTIL_SPLIT);
    expect(s.sqlite.query("SELECT count(*) AS n FROM verification_rollups_minute WHERE folded = 0").get()).toEqual({ n: 0 });
    for (const g of ["hour", "day", "month"] as const) expect(sumsOf(s, `verification_rollups_${g}_all`)).toEqual(before[ROLLUP_TABLES[g]]!.sums);
    writeEvents(s);
    for (const t of TABLES) {
      expect(sumsOf(s, t)).toEqual({ ...before[t]!.sums, count: before[t]!.sums.count! * 2, credits: before[t]!.sums.credits! * 2 });
    }
  } finally {
    s.close();
  }
});

test("0006 failing part-way leaves the old tables and their rows as they were, and is not recorded", () => {
  const s = oldLayoutDb();
  try {
    writeOldRollups(s);
    const before = Object.fromEntries(TABLES.map((t) => [t, rowsOf(s, t)]));
    // The last table's copy cannot be created: the migration fails after recreating the other seven.
    s.sqlite.run(`CREATE TABLE __new_verification_totals_month (x)`);
    expect(() => applyMigrations(s.sqlite)).toThrow(/already exists/);
    for (const t of TABLES) {
      expect(sqlOf(s, t)).not.toContain("WITHOUT ROWID");
      expect(indexesOf(s, t)).toContain(`${t}_time_idx`);
      expect(rowsOf(s, t)).toEqual(before[t]!);
    }
    const recorded = s.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM "__drizzle_migrations"`).get()!.n;
    expect(recorded).toBe(BEFORE_0006);
  } finally {
    s.close();
  }
});
