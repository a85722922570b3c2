/** POST /v2/analytics.getVerifications: the spec's example queries, confinement, access, limits. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { INSUFFICIENT, TEST_ACTOR, expectError, expectInvalid } from "../../../support/contract.ts";
import { DAY, runQuery, seedWorld, startOfDay, type AnalyticsWorld } from "./support.ts";
import { insertEvents } from "./store.ts";

let h: Harness;
let w: AnalyticsWorld;
beforeAll(async () => {
  h = await startHarness();
  w = await seedWorld(h);
});
afterAll(async () => { await h.stop(); });

const PER_DAY = "key_verifications_per_day_v1";
const rows = async (query: string, key?: string) => {
  const res = await runQuery(h, query, key);
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data as Array<Record<string, unknown>>;
};

describe("200: the spec's examples return exact numbers", () => {
  test("SELECT SUM(count) over the whole workspace", async () => {
    expect(await rows(`SELECT SUM(count) AS total FROM ${PER_DAY}`)).toEqual([{ total: 125 }]);
  });

  test("an unaliased expression is named by its text", async () => {
    expect(await rows(`SELECT SUM(count) FROM ${PER_DAY}`)).toEqual([{ "SUM(count)": 125 }]);
  });

  test("WHERE time > now() - INTERVAL 7 DAY uses the injected clock", async () => {
    expect(await rows(`SELECT SUM(count) AS total FROM ${PER_DAY} WHERE time > now() - INTERVAL 7 DAY`)).toEqual([{ total: 25 }]);
  });

  test("sumIf(count, outcome = 'VALID')", async () => {
    expect(await rows(`SELECT sumIf(count, outcome = 'VALID') AS valid, SUM(count) AS total FROM ${PER_DAY} WHERE time > now() - INTERVAL 7 DAY`))
      .toEqual([{ valid: 22, total: 25 }]);
  });

  test("GROUP BY external_id ORDER BY total DESC", async () => {
    expect(await rows(`SELECT external_id, SUM(count) AS total FROM ${PER_DAY} GROUP BY external_id ORDER BY total DESC`))
      .toEqual([{ external_id: "alice", total: 112 }, { external_id: "bob", total: 13 }]);
  });

  test("GROUP BY with a time filter, ORDER BY and LIMIT", async () => {
    expect(await rows(`SELECT external_id, SUM(count) AS total FROM ${PER_DAY} WHERE time > now() - INTERVAL 7 DAY GROUP BY external_id ORDER BY total DESC LIMIT 1`))
      .toEqual([{ external_id: "bob", total: 13 }]);
  });

  test("per day, per outcome, with countIf and uniq", async () => {
    const yesterday = startOfDay(h.clock.now()) - DAY;
    expect(await rows(`SELECT time, countIf(outcome = 'VALID') AS valid_rows, uniq(key_id) AS key_count FROM ${PER_DAY} WHERE time = ${yesterday} GROUP BY time`))
      .toEqual([{ time: yesterday, valid_rows: 2, key_count: 2 }]);
  });

  test("toStartOfWeek and toDate work on Unix ms", async () => {
    const [row] = await rows(`SELECT toStartOfWeek(time) AS week, toDate('2023-11-12') AS d FROM ${PER_DAY} LIMIT 1`);
    expect(row!.d).toBe(Date.UTC(2023, 10, 12));
    expect(new Date(row!.week as number).getUTCDay()).toBe(0);
  });

  test("the raw table: count(), avg(latency), if(), and upstream's constant region and source", async () => {
    expect(await rows("SELECT count() AS n, avg(latency) AS lat, SUM(if(outcome = 'VALID', 1, 0)) AS ok, any_region FROM (SELECT *, region AS any_region FROM key_verifications_v1) GROUP BY any_region"))
      .toEqual([{ n: 3, lat: 4, ok: 2, any_region: "local" }]);
  });

  test("CTEs, subqueries and UNION ALL over the allowed tables", async () => {
    const data = await rows(`WITH recent AS (SELECT external_id, count FROM ${PER_DAY} WHERE time > now() - INTERVAL 7 DAY)
      SELECT 'recent' AS span, SUM(count) AS total FROM recent UNION ALL SELECT 'all', SUM(count) FROM (SELECT count FROM ${PER_DAY})`);
    expect(data).toEqual([{ span: "recent", total: 25 }, { span: "all", total: 125 }]);
  });

  test("an empty result is an empty array", async () => {
    expect(await rows(`SELECT * FROM ${PER_DAY} WHERE outcome = 'NO_SUCH'`)).toEqual([]);
  });
});

describe("200: confinement", () => {
  test("another workspace's root key sees only its own rows", async () => {
    expect(await rows(`SELECT SUM(count) AS total FROM ${PER_DAY}`, w.keyB)).toEqual([{ total: 1500 }]);
    expect(await rows(`SELECT DISTINCT workspace_id FROM ${PER_DAY}`, w.keyB)).toEqual([{ workspace_id: w.wsB }]);
  });

  test("a filter naming the other workspace finds nothing", async () => {
    expect(await rows(`SELECT count() AS n FROM key_verifications_v1 WHERE workspace_id = '${w.wsB}'`)).toEqual([{ n: 0 }]);
  });

  test("api.<apiId>.read_analytics sees that API's key space only", async () => {
    const scoped = await h.rootKeyWith([`api.${w.api2}.read_analytics`]);
    expect(await rows(`SELECT SUM(count) AS total, uniq(key_space_id) AS spaces FROM ${PER_DAY}`, scoped)).toEqual([{ total: 6, spaces: 1 }]);
    expect(await rows(`SELECT count() AS n FROM key_verifications_v1 WHERE key_space_id = '${w.ks1}'`, scoped)).toEqual([{ n: 0 }]);
  });

  test("several API grants add up; a grant for an API of another workspace adds nothing", async () => {
    const both = await h.rootKeyWith([`api.${w.api1}.read_analytics`, `api.${w.api2}.read_analytics`]);
    expect(await rows(`SELECT SUM(count) AS total FROM ${PER_DAY}`, both)).toEqual([{ total: 125 }]);
    const foreign = await h.rootKeyWith([`api.${w.api1}.read_analytics`], "other");
    expect(await rows(`SELECT SUM(count) AS total FROM ${PER_DAY}`, foreign)).toEqual([{ total: 0 }]);
  });
});

describe("200/422: row limit", () => {
  test("more than 10,000 rows are cut to 10,000; a LIMIT above it is lowered", async () => {
    await insertEvents(h, Array.from({ length: 10_050 }, (_, i) => ({ time: i, workspaceId: w.wsA, keySpaceId: "ks_bulk", keyId: `bulk_${i}` })));
    expect((await rows("SELECT key_id FROM key_verifications_v1 WHERE key_space_id = 'ks_bulk'")).length).toBe(10_000);
    expect((await rows("SELECT key_id FROM key_verifications_v1 WHERE key_space_id = 'ks_bulk' LIMIT 50000")).length).toBe(10_000);
    expect((await rows("SELECT key_id FROM key_verifications_v1 WHERE key_space_id = 'ks_bulk' LIMIT 7")).length).toBe(7);
  });

  test("a result over 4 MiB is 422 query_memory_limit_exceeded", async () => {
    const wide = `'${"x".repeat(2000)}'`;
    const res = await runQuery(h, `SELECT ${wide} AS a, ${wide} AS b, ${wide} AS c FROM key_verifications_v1`);
    expectError(h, res, 422, "user/unprocessable_entity/query_memory_limit_exceeded");
  });
});

describe("400", () => {
  test("an empty query is a validation error", async () => {
    expectInvalid(h, await runQuery(h, ""), "body.query");
  });

  test("a syntax error names the problem", async () => {
    const res = await runQuery(h, "SELECT FROM WHERE");
    expectError(h, res, 400, "user/bad_request/invalid_analytics_query");
    expect(res.body.error.detail).toStartWith("Invalid SQL syntax: ");
  });

  test("a query over 16 KiB", async () => {
    const res = await runQuery(h, `SELECT count() FROM ${PER_DAY} WHERE external_id = '${"a".repeat(16 * 1024)}'`);
    expectError(h, res, 400, "user/bad_request/invalid_analytics_query", "Analytics query exceeds the maximum length of 16384 bytes.");
  });

  test("an unknown column", async () => {
    const res = await runQuery(h, `SELECT nope FROM ${PER_DAY}`);
    expectError(h, res, 400, "user/bad_request/invalid_analytics_query", "The query could not be run: no such column: nope");
  });

  test("a query that reads no table", async () => {
    expectError(h, await runQuery(h, "SELECT 1"), 400, "user/bad_request/invalid_analytics_query", "The query must read FROM one of the analytics tables.");
  });
});

describe("403", () => {
  test("read_api does not grant analytics; the detail names the permission", async () => {
    const res = await runQuery(h, `SELECT count() FROM ${PER_DAY}`, await h.rootKeyWith(["api.*.read_api", `api.${w.api1}.read_api`]));
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'api.*.read_analytics'");
  });

  test("ratelimit.*.read_analytics is not api analytics", async () => {
    expectError(h, await runQuery(h, `SELECT count() FROM ${PER_DAY}`, await h.rootKeyWith(["ratelimit.*.read_analytics"])), 403, INSUFFICIENT);
  });
});

describe("412", () => {
  test("a workspace without the opt-in; turning it on takes effect at once", async () => {
    await h.running.services.workspaces.create({ name: "closed" }, TEST_ACTOR);
    const key = await h.rootKeyWith(["api.*.read_analytics"], "closed");
    const res = await runQuery(h, `SELECT count() FROM ${PER_DAY}`, key);
    expectError(h, res, 412, "service/data/analytics_not_configured");
    await h.running.services.workspaces.setAnalytics("closed", true, TEST_ACTOR);
    expect((await runQuery(h, `SELECT count() AS n FROM ${PER_DAY}`, key)).body.data).toEqual([{ n: 0 }]);
  });
});
