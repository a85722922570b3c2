/**
 * Copying a single box's analytics.db into the cluster's `analytics` schema
 * (src/storage/pg/copy-analytics.ts, with the records by copy-from-sqlite.ts): from a data dir
 * whose events and rate-limit decisions were recorded through the real service and flushed, and
 * whose minute rows are partly folded (so the public hour, day and month tables add unfolded
 * minutes to folded rows of the same keys), every public table shows on PostgreSQL the counts it
 * shows on SQLite, each asked with plain SQL; a target holding analytics rows is refused, and
 * replaced on request. One server for the file; a fresh database per test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { EventTables } from "../../src/services/analytics/tables.ts";
import { ANALYTICS_DATABASE_FILE } from "../../src/storage/data-dir.ts";
import { openStorage } from "../../src/storage/db.ts";
import { copyDataDirToPostgres, TargetNotEmptyError } from "../../src/storage/pg/copy-from-sqlite.ts";
import { startHarness } from "../support/harness.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { postgresForFile } from "./pg-database.ts";

const MINUTE_MS = 60_000;
const START_MS = Date.UTC(2026, 3, 30, 23, 40);

/** Each public table, and the counts per bucket asked of it on both sides (SQLite's coarser rollups are the `_all` views). */
const QUERIES: Array<{ table: string; sqlite?: string; counts: string }> = [
  { table: "verification_events", counts: `"time" / 60000 * 60000 AS b, count(*) AS n, sum(spent_credits) AS c, sum(latency_ms) AS l, min(request_id) AS r` },
  ...["minute", "hour", "day", "month"].map((g) => ({
    table: `verification_rollups_${g}`, sqlite: g === "minute" ? undefined : `verification_rollups_${g}_all`,
    counts: `"time" AS b, sum("count") AS n, sum(spent_credits) AS c, sum(latency_sum_ms) AS l, max(latency_max_ms) AS m, count(DISTINCT key_id || '|' || outcome || '|' || tags) AS k`,
  })),
  ...["minute", "hour", "day", "month"].map((g) => ({ table: `verification_totals_${g}`, counts: `"time" AS b, sum("count") AS n, sum(spent_credits) AS c, count(DISTINCT outcome) AS k` })),
  ...["minute", "hour", "day", "month"].map((g) => ({ table: `ratelimit_decisions_${g}`, counts: `"time" AS b, sum(passed) AS n, sum(blocked) AS c` })),
];

/**
 * Every value as text, numbers as numbers first (SQLite's 3.0 and PostgreSQL's 3 agree), rounded
 * to a millionth: latencies measured by the service are summed in another order on each side.
 */
const canonical = (rows: Record<string, unknown>[]) => rows.map((r) => Object.values(r)
  .map((v) => (typeof v === "string" && !/^-?\d+(\.\d+)?(e-?\d+)?$/.test(v) ? v : String(Math.round(Number(v) * 1e6) / 1e6))).join("|"));

function sqliteCounts(dataDir: string): Record<string, string[]> {
  const storage = openStorage(join(dataDir, ANALYTICS_DATABASE_FILE), { readonly: true });
  try {
    return Object.fromEntries(QUERIES.map((q) => [q.table, canonical(storage.sqlite.query<Record<string, unknown>, []>(
      `SELECT ${q.counts} FROM ${q.sqlite ?? q.table} GROUP BY b ORDER BY b`).all())]));
  } finally {
    storage.close();
  }
}

async function pgCounts(sql: SQL): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const q of QUERIES) out[q.table] = canonical(await sql.unsafe(`SELECT ${q.counts} FROM analytics.${q.table} GROUP BY b ORDER BY b`));
  return out;
}

describe.skipIf(skipWithout(missing.postgres(), "copying analytics.db into PostgreSQL"))("copying a data dir's analytics.db into PostgreSQL", () => {
  const pg = postgresForFile();
  let dataDir = "";
  let source: Record<string, string[]>;

  beforeAll(async () => {
    const h = await startHarness({ startMs: START_MS });
    dataDir = h.dataDir;
    const call = async (path: string, body: unknown) => {
      const res = await h.post(path, body);
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data;
    };
    const { apiId } = await call("/v2/apis.createApi", { name: "shop" });
    const keys = [await call("/v2/keys.createKey", { apiId, credits: { remaining: 1000 } }), await call("/v2/keys.createKey", { apiId, externalId: "user_1" })];
    // Twice over the same minutes around midnight at the end of a month.
    const verifyRound = async (round: number) => {
      for (let i = 0; i < 30; i++) {
        h.clock.set(START_MS + i * 2 * MINUTE_MS + round * 1000);
        await call("/v2/keys.verifyKey", { key: keys[i % 2].key, tags: i % 3 ? ["a"] : [], credits: i % 2 ? undefined : { cost: 2 } });
        await call("/v2/ratelimit.limit", { namespace: "email", identifier: `u${i % 4}`, limit: 2, duration: 3_600_000 });
      }
    };
    await verifyRound(0);
    await verifyRound(1);
    await h.running.stop();
    // Events the writer wrote and a crash kept it from folding: minute rows beside folded rows of the same keys and hours.
    const analytics = openStorage(join(dataDir, ANALYTICS_DATABASE_FILE));
    const recorded = analytics.sqlite.query<{ workspace_id: string; key_space_id: string; key_id: string; identity_id: string; external_id: string }, []>(
      "SELECT DISTINCT workspace_id, key_space_id, key_id, identity_id, external_id FROM verification_events ORDER BY key_id").all();
    expect(recorded.map((k) => k.key_id).sort()).toEqual(keys.map((k) => k.keyId).sort());
    new EventTables(analytics).write(recorded.flatMap((k, i) => [0, 17, 40].map((minute) => ({
      timeMs: START_MS + minute * MINUTE_MS + 5000, requestId: `late_${i}_${minute}`, workspaceId: k.workspace_id, keySpaceId: k.key_space_id, keyId: k.key_id,
      identityId: k.identity_id, externalId: k.external_id, outcome: "VALID", tags: i ? "[\"a\"]" : "[]", spentCredits: i ? 0 : 2, latencyMs: 1.5,
    }))));
    analytics.close();
    source = sqliteCounts(dataDir);
  }, 60_000);

  afterAll(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("the data set has rows in every public table, and unfolded minutes beside folded rows of the same hours", () => {
    expect(Object.entries(source).filter(([, rows]) => rows.length === 0).map(([table]) => table)).toEqual([]);
    const storage = openStorage(join(dataDir, ANALYTICS_DATABASE_FILE), { readonly: true });
    const { unfolded, folded } = storage.sqlite.query<{ unfolded: number; folded: number }, []>(
      "SELECT sum(folded = 0) AS unfolded, sum(folded = 1) AS folded FROM verification_rollups_minute").get()!;
    storage.close();
    expect(unfolded).toBeGreaterThan(0);
    expect(folded).toBeGreaterThan(0);
  });

  test("every public table counts on PostgreSQL what it counts on SQLite, per bucket", async () => {
    const url = await pg.freshDatabase();
    const copied = await copyDataDirToPostgres(dataDir, url, { batchRows: 7 });
    expect(copied["analytics.verification_events"]).toBe(66);
    expect(await pgCounts(pg.client(url))).toEqual(source);
  });

  test("a target holding analytics rows is refused and left unchanged; with replace it ends holding the box's", async () => {
    const url = await pg.freshDatabase();
    const sql = pg.client(url);
    await sql`INSERT INTO analytics.ratelimit_decisions_minute (time, workspace_id, namespace_id, passed, blocked) VALUES (0, 'ws_stray', 'ns', 1, 1)`;
    const before = await pgCounts(sql);
    const error = await copyDataDirToPostgres(dataDir, url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetNotEmptyError);
    expect((error as TargetNotEmptyError).tables).toEqual(["analytics.ratelimit_decisions_minute"]);
    expect(await pgCounts(sql)).toEqual(before);
    await copyDataDirToPostgres(dataDir, url, { replace: true });
    expect(await pgCounts(sql)).toEqual(source);
  });
});
