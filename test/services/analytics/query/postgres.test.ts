/**
 * The PostgreSQL dialect's SQL (the cluster mode): what it prints differently from SQLite, read
 * here as text; that both answer alike is test/cluster/pg-analytics-dialect.test.ts's.
 */
import { beforeAll, expect, test } from "bun:test";
import { compileAnalyticsQuery, initSqlParser, POSTGRES, SQLITE, WATCHDOG_FUNCTION, type Dialect } from "../../../../src/services/analytics/query/compile.ts";

beforeAll(async () => { await initSqlParser(); });

const compile = (query: string, dialect: Dialect = POSTGRES, keySpaceIds: string[] | null = null) =>
  compileAnalyticsQuery(query, { confinement: { workspaceId: "ws_a", keySpaceIds }, nowMs: Date.UTC(2026, 5, 15), maxRows: 100, dialect });

test("the physical tables in schema analytics, the rollups as tables, $n parameters, no watchdog", () => {
  const { sql, params } = compile("SELECT key_id FROM key_verifications_per_day_v1 WHERE outcome = 'VALID'", POSTGRES, ["ks_1", "ks_2"]);
  expect(sql).toContain(`FROM analytics."verification_rollups_day" WHERE "workspace_id" = $1 AND "key_space_id" IN ($2, $3)`);
  expect(sql).toContain(`("outcome" = $4)`);
  expect(params).toEqual(["ws_a", "ks_1", "ks_2", "VALID"]);
  expect(sql).not.toContain(WATCHDOG_FUNCTION);
  expect(compile("SELECT key_id FROM key_verifications_per_day_v1", SQLITE).sql).toContain(WATCHDOG_FUNCTION);
});

test("the raw events without batch bounds; an empty scope is FALSE", () => {
  const { sql } = compile("SELECT count() FROM key_verifications_v1 WHERE time > now() - INTERVAL 1 HOUR", POSTGRES, []);
  expect(sql).toContain(`FROM analytics."verification_events" WHERE "workspace_id" = $1 AND FALSE)`);
  expect(sql).not.toContain("batch_");
});

test("ORDER BY a public column needs no NULLS clause (an index can give the order); anything that may be NULL sorts NULLs first as in SQLite", () => {
  expect(compile("SELECT * FROM key_verifications_v1 ORDER BY time DESC").sql).toEndWith(`ORDER BY "time" DESC LIMIT 100`);
  expect(compile("SELECT time AS t FROM key_verifications_v1 AS v ORDER BY t, v.key_id").sql).toEndWith(`ORDER BY "t", "v"."key_id" LIMIT 100`);
  expect(compile("SELECT max(time) AS t FROM key_verifications_v1 ORDER BY t").sql).toEndWith(`ORDER BY "t" NULLS FIRST LIMIT 100`);
  expect(compile("SELECT b.time AS u FROM key_verifications_v1 AS a LEFT JOIN key_verifications_v1 AS b ON a.time = b.time ORDER BY u DESC").sql)
    .toEndWith(`ORDER BY "u" DESC NULLS LAST LIMIT 100`);
});

test("names in lower case, the caller's column names kept apart; a SELECT's alias inlined into its HAVING", () => {
  const compiled = compile("SELECT Key_ID AS KeyId, SUM(Count) AS Total FROM key_verifications_per_hour_v1 AS H GROUP BY h.KEY_ID HAVING total > 1");
  expect(compiled.sql).toStartWith(`SELECT "key_id" AS "keyid", coalesce(sum("count"), 0) AS "total" FROM`);
  expect(compiled.sql).toContain(`GROUP BY "h"."key_id" HAVING (coalesce(sum("count"), 0) > 1::int8)`);
  expect(compiled.columns).toEqual(["KeyId", "Total"]);
  expect(compile("SELECT * FROM key_verifications_v1").columns).toBeUndefined();
});

test("conditions are booleans and selected comparisons 1 or 0; a string used twice is one parameter", () => {
  const { sql, params } = compile("SELECT outcome = 'VALID' AS ok, count() FROM key_verifications_v1 WHERE 1 AND latency GROUP BY outcome = 'VALID'");
  expect(sql).toContain(`CAST(("outcome" = $1) AS int4) AS "ok"`);
  expect(sql).toContain(`WHERE ((1::int8 <> 0) AND ("latency" <> 0))`);
  expect(sql).toContain(`GROUP BY CAST(("outcome" = $1) AS int4)`);
  expect(params).toEqual(["VALID", "ws_a"]);
});
