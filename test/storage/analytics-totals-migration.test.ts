/** Upgrading a database that already holds rollups: the totals tables are filled from them. */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../src/storage/db.ts";
import { applyMigrations } from "../../src/storage/migrate.ts";
import { MIGRATIONS } from "../../src/storage/migrations.ts";

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

test("0003 backfills every totals table from its rollup", () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-totals-"));
  dirs.push(dir);
  const s = openStorage(join(dir, "tollgate.db"));
  try {
    applyMigrations(s.sqlite, MIGRATIONS.slice(0, 2));
    const rollup = (g: string, time: number, ks: string, key: string, outcome: string, count: number, credits: number) => s.sqlite.run(
      `INSERT INTO verification_rollups_${g} (time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, count, spent_credits, latency_sum_ms, latency_max_ms)
       VALUES (?, 'ws_a', ?, ?, '', '', ?, '[]', ?, ?, 0, 0)`, [time, ks, key, outcome, count, credits]);
    for (const g of ["minute", "hour", "day", "month"]) {
      rollup(g, 1000, "ks_1", "key_1", "VALID", 3, 1);
      rollup(g, 1000, "ks_1", "key_2", "VALID", 4, 2);
      rollup(g, 1000, "ks_1", "key_2", "RATE_LIMITED", 5, 0);
      rollup(g, 2000, "ks_2", "key_3", "VALID", 6, 0);
    }
    expect(applyMigrations(s.sqlite, MIGRATIONS.slice(0, 4))).toEqual(["0002_analytics_totals", "0003_backfill_analytics_totals"]);
    for (const g of ["minute", "hour", "day", "month"]) {
      expect(s.sqlite.query(`SELECT time, key_space_id, outcome, count, spent_credits FROM verification_totals_${g} ORDER BY time, outcome`).all()).toEqual([
        { time: 1000, key_space_id: "ks_1", outcome: "RATE_LIMITED", count: 5, spent_credits: 0 },
        { time: 1000, key_space_id: "ks_1", outcome: "VALID", count: 7, spent_credits: 3 },
        { time: 2000, key_space_id: "ks_2", outcome: "VALID", count: 6, spent_credits: 0 },
      ]);
    }
  } finally {
    s.close();
  }
});
