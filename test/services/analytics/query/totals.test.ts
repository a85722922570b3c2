/** Which SELECTs over a rollup read its totals table instead (totals.ts): exactly those whose answer cannot change. */
import { beforeAll, describe, expect, test } from "bun:test";
import { compileAnalyticsQuery, initSqlParser } from "../../../../src/services/analytics/query/compile.ts";

beforeAll(async () => { await initSqlParser(); });

/** The physical tables a query reads, in order of appearance. */
const reads = (query: string) => {
  const { sql } = compileAnalyticsQuery(query, { confinement: { workspaceId: "ws", keySpaceIds: null }, nowMs: 0, maxRows: 10 });
  return [...sql.matchAll(/main\.`(verification_\w+)`/g)].map((m) => m[1]);
};
const DAY = "key_verifications_per_day_v1";

describe("read from the totals", () => {
  test.each([
    `SELECT SUM(count) FROM ${DAY}`,
    `SELECT time, SUM(count) AS total, sumIf(count, outcome = 'VALID') AS valid FROM ${DAY} WHERE time > now() - INTERVAL 365 DAY GROUP BY time ORDER BY time`,
    `SELECT outcome, SUM(count) AS n, SUM(spent_credits) AS c FROM ${DAY} GROUP BY outcome HAVING SUM(count) > 10 ORDER BY outcome LIMIT 5`,
    `SELECT toStartOfMonth(time) AS m, key_space_id, SUM(count) AS n FROM ${DAY} WHERE key_space_id IN ('ks_1', 'ks_2') GROUP BY m, key_space_id`,
    `SELECT DISTINCT outcome FROM ${DAY}`,
    `SELECT min(time) AS first, max(time) AS last, uniq(key_space_id) AS apis, count(DISTINCT outcome) AS outcomes FROM ${DAY}`,
    `SELECT round(SUM(count) / 7, 1) AS per_day, if(SUM(count) > 100, 'busy', 'quiet') AS load FROM ${DAY} WHERE time >= today() - INTERVAL 7 DAY`,
    `SELECT time FROM ${DAY} WHERE outcome = 'VALID' GROUP BY time HAVING SUM(count) > 1`,
    `WITH daily AS (SELECT time, SUM(count) AS n FROM ${DAY} GROUP BY time) SELECT max(n) AS peak FROM daily`,
  ])("%s", (query) => {
    expect(reads(query)).toEqual(["verification_totals_day"]);
  });

  test("every rollup has totals", () => {
    for (const g of ["minute", "hour", "day", "month"]) expect(reads(`SELECT SUM(count) FROM key_verifications_per_${g}_v1`)).toEqual([`verification_totals_${g}`]);
  });

  test("each SELECT is judged on its own", () => {
    expect(reads(`SELECT SUM(count) AS a FROM ${DAY} UNION ALL SELECT count() FROM ${DAY}`)).toEqual(["verification_totals_day", "verification_rollups_day_all"]);
  });
});

describe("read from the rollup", () => {
  test.each([
    ["a column the totals lack", `SELECT external_id, SUM(count) FROM ${DAY} GROUP BY external_id`],
    ["a column the totals lack, in WHERE", `SELECT SUM(count) FROM ${DAY} WHERE key_id = 'key_1'`],
    ["a column the totals lack, in ORDER BY", `SELECT time, SUM(count) AS n FROM ${DAY} GROUP BY time ORDER BY key_id`],
    ["a column the totals lack, upper case", `SELECT SUM(count) FROM ${DAY} WHERE KEY_ID <> ''`],
    ["latency_avg", `SELECT avg(latency_avg) FROM ${DAY}`],
    ["count() counts rows", `SELECT count() FROM ${DAY}`],
    ["countIf counts rows", `SELECT countIf(outcome = 'VALID') FROM ${DAY}`],
    ["avg averages rows", `SELECT avg(count) FROM ${DAY}`],
    ["max of a summed column", `SELECT max(count) FROM ${DAY}`],
    ["a summed column outside a sum", `SELECT time, count FROM ${DAY} GROUP BY time, count`],
    ["a sum of something else", `SELECT SUM(1) FROM ${DAY}`],
    ["a sum of an expression", `SELECT SUM(count * count) FROM ${DAY}`],
    ["sum(DISTINCT)", `SELECT SUM(DISTINCT count) FROM ${DAY}`],
    ["no aggregation: one row per rollup row", `SELECT time, outcome FROM ${DAY}`],
    ["SELECT *", `SELECT * FROM ${DAY}`],
    ["a join", `SELECT SUM(a.count) FROM ${DAY} AS a JOIN key_verifications_per_month_v1 AS b ON a.outcome = b.outcome`],
    ["a nested query that may refer to a dropped column", `SELECT SUM(count) FROM ${DAY} AS d WHERE EXISTS (SELECT 1 FROM key_verifications_v1 AS r WHERE r.key_id = d.time)`],
    ["an alias that shadows a summed column", `SELECT time, SUM(count) AS count FROM ${DAY} GROUP BY time ORDER BY count`],
  ])("%s", (_why, query) => {
    expect(reads(query)).toContain("verification_rollups_day_all");
    expect(reads(query)).not.toContain("verification_totals_day");
  });

  test("the raw table has no totals", () => {
    expect(reads("SELECT count() FROM key_verifications_v1 GROUP BY outcome")).toEqual(["verification_events"]);
  });
});
