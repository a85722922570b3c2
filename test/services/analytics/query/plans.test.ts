/**
 * How SQLite runs the analytics queries over the rollup, totals and raw tables: a search of the
 * primary key (of the raw events, their batch rows' index) by workspace and time, never a scan, so
 * a year of a workspace costs its own rows.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { compileAnalyticsQuery, initSqlParser } from "../../../../src/services/analytics/query/compile.ts";
import { openAnalyticsConnection } from "../../../../src/services/analytics/execute.ts";
import { tempDb, type TempDb } from "../support.ts";

let db: TempDb;
let conn: Database;
beforeAll(async () => {
  await initSqlParser();
  db = tempDb();
  conn = openAnalyticsConnection(db.storage.sqlite.filename, { deadlineMs: Number.MAX_SAFE_INTEGER, calls: 0, expired: false });
});
afterAll(() => { conn.close(); db.close(); });

/** The plan's lines for `query`, compiled for one workspace (and, when given, some key spaces). */
function plan(query: string, keySpaceIds: string[] | null = null): string[] {
  const { sql, params } = compileAnalyticsQuery(query, { confinement: { workspaceId: "ws_a", keySpaceIds }, nowMs: Date.UTC(2026, 5, 15), maxRows: 100 });
  return conn.query<{ detail: string }, Array<string | number>>(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => r.detail);
}

const SINCE_365 = "time > now() - INTERVAL 365 DAY";

test("a workspace's per-day counts over 365 days search its totals by primary key, already in time order", () => {
  expect(plan(`SELECT time, SUM(count) AS total, sumIf(count, outcome = 'VALID') AS valid FROM key_verifications_per_day_v1 WHERE ${SINCE_365} GROUP BY time ORDER BY time`))
    .toEqual(["SEARCH main.verification_totals_day USING PRIMARY KEY (workspace_id=? AND time>?)"]);
});

test("every granularity's totals, for a whole workspace or a key-space-scoped caller, are searched by primary key", () => {
  for (const g of ["minute", "hour", "day", "month"]) {
    for (const keySpaceIds of [null, ["ks_1", "ks_2"]]) {
      expect(plan(`SELECT time, SUM(count) FROM key_verifications_per_${g}_v1 WHERE time > now() - INTERVAL 7 DAY GROUP BY time`, keySpaceIds))
        .toEqual([`SEARCH main.verification_totals_${g} USING PRIMARY KEY (workspace_id=? AND time>?)`]);
    }
  }
});

test("queries that need the rollup's keys search the rollup by primary key, and the minute rows not folded into it by their index", () => {
  expect(plan(`SELECT time, SUM(count) AS total FROM key_verifications_per_minute_v1 WHERE ${SINCE_365} AND key_id = 'key_42' GROUP BY time ORDER BY time`))
    .toEqual(["SEARCH main.verification_rollups_minute USING PRIMARY KEY (workspace_id=? AND time>?)"]);
  for (const g of ["hour", "day", "month"]) {
    expect(plan(`SELECT time, SUM(count) AS total FROM key_verifications_per_${g}_v1 WHERE ${SINCE_365} AND key_id = 'key_42' GROUP BY time ORDER BY time`)).toEqual([
      `CO-ROUTINE verification_rollups_${g}_all`, "COMPOUND QUERY", "LEFT-MOST SUBQUERY",
      `SEARCH verification_rollups_${g} USING PRIMARY KEY (workspace_id=? AND time>?)`,
      "UNION ALL", "SEARCH verification_rollups_minute USING INDEX verification_rollups_minute_unfolded_idx (workspace_id=?)",
      `SCAN verification_rollups_${g}_all`, "USE TEMP B-TREE FOR GROUP BY",
    ]);
  }
  expect(plan(`SELECT key_id, count FROM key_verifications_per_hour_v1 LIMIT 10`)).toEqual([
    "COMPOUND QUERY", "LEFT-MOST SUBQUERY", "SEARCH verification_rollups_hour USING PRIMARY KEY (workspace_id=?)",
    "UNION ALL", "SEARCH verification_rollups_minute USING INDEX verification_rollups_minute_unfolded_idx (workspace_id=?)",
  ]);
});

test("the raw events search their batch rows by workspace and the range's lower bound, in each layout's arm of the view", () => {
  const arms = (search: string) => [
    "COMPOUND QUERY", "LEFT-MOST SUBQUERY", search, "SCAN e VIRTUAL TABLE INDEX 1:", "UNION ALL", search, "SCAN e VIRTUAL TABLE INDEX 1:",
  ];
  expect(plan(`SELECT key_id, count() AS n FROM key_verifications_v1 WHERE time > now() - INTERVAL 1 HOUR AND outcome = 'VALID' GROUP BY key_id`, ["ks_1"]))
    .toEqual([
      "CO-ROUTINE verification_events",
      ...arms("SEARCH b USING INDEX verification_event_batches_workspace_time_idx (workspace_id=? AND max_time>?)"),
      "SCAN verification_events", "USE TEMP B-TREE FOR GROUP BY",
    ]);
  expect(plan(`SELECT count() FROM key_verifications_v1`)).toEqual([
    "CO-ROUTINE verification_events", ...arms("SEARCH b USING INDEX verification_event_batches_workspace_time_idx (workspace_id=?)"), "SCAN verification_events",
  ]);
});
