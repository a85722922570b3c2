/**
 * `tollgate stats` over the cluster's totals (src/services/analytics/pg-totals.ts) against a real
 * PostgreSQL, with the answers test/services/analytics/totals.test.ts holds analytics.db's to:
 * the first, partial hour from the minute totals and every later hour from the hour totals; a
 * deleted API's counts under its id; one API's counts only, with read_analytics on it.
 */
import { describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { PgEventWriter, PgVerificationTotals } from "../../src/services/analytics/index.ts";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import { pgDatabase } from "../../src/storage/pg/db.ts";
import { clusterRecords } from "../../src/storage/pg/records/index.ts";
import { event } from "../services/analytics/support.ts";
import { hourStart, MID_HOUR_EVENTS, MID_HOUR_LATER, MID_HOUR_SINCE_MS, MID_HOUR_SUMMARY } from "../services/analytics/totals-cases.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { pack } from "./analytics-events.ts";
import { postgresForFile } from "./pg-database.ts";


const principal = (workspaceId: string, permissions: string[] = [...ALL_GRANTS]) =>
  ({ workspaceId, rootKeyId: "rk", permissions: new Set(permissions), actor: { type: "cli" as const, id: "cli" } });

async function seedApis(sql: SQL): Promise<void> {
  await sql`INSERT INTO workspaces (id, name, created_at) VALUES ('ws_a', 'a', 0), ('ws_b', 'b', 0)`;
  await sql`INSERT INTO key_spaces (id, workspace_id, created_at) VALUES ('ks_a', 'ws_a', 0), ('ks_b', 'ws_a', 0)`;
  await sql`INSERT INTO apis (id, workspace_id, key_space_id, name, created_at, deleted_at) VALUES ('api_a', 'ws_a', 'ks_a', 'first', 0, NULL), ('api_b', 'ws_a', 'ks_b', 'second', 0, 1)`;
}

async function record(sql: SQL, events: Parameters<typeof event>[0][]): Promise<void> {
  const writer = new PgEventWriter(sql);
  await writer.write(pack(events.map(event)));
  await writer.close();
}

describe.skipIf(skipWithout(missing.postgres(), "the cluster's stats"))("verification totals from PostgreSQL", () => {
  const pg = postgresForFile();

  async function fresh(): Promise<{ sql: SQL; totals: PgVerificationTotals }> {
    const sql = pg.client(await pg.freshDatabase());
    await seedApis(sql);
    return { sql, totals: new PgVerificationTotals({ sql, records: clusterRecords(pgDatabase(sql)) }) };
  }

  test("since the middle of an hour: that hour's later minutes and every later hour count; its earlier minutes do not", async () => {
    const { sql, totals } = await fresh();
    await record(sql, MID_HOUR_EVENTS);
    expect(await totals.since(principal("ws_a"), { sinceMs: MID_HOUR_SINCE_MS })).toEqual(MID_HOUR_SUMMARY);
    for (const [sinceMs, total] of MID_HOUR_LATER) expect((await totals.since(principal("ws_a"), { sinceMs })).total).toBe(total);
  });

  test("one API: its counts only; read_analytics on it is enough, on another API is not", async () => {
    const { sql, totals } = await fresh();
    await record(sql, [{ timeMs: hourStart, outcome: "VALID" }, { timeMs: hourStart, outcome: "VALID", keySpaceId: "ks_b" }]);
    const range = { sinceMs: hourStart, apiId: "api_a" };
    expect((await totals.since(principal("ws_a", ["api.api_a.read_analytics"]), range)).total).toBe(1);
    await expect(totals.since(principal("ws_a", ["api.api_b.read_analytics"]), range)).rejects.toThrow("read_analytics");
    await expect(totals.since(principal("ws_a", ["api.api_a.read_analytics"]), { ...range, apiId: undefined })).rejects.toThrow("read_analytics");
  });
});
