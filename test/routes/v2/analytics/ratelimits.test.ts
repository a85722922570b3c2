/**
 * The rate-limit decision tables of analytics.getVerifications (ratelimits_per_{minute,hour,day,month}_v1):
 * decisions of ratelimit.limit and multiLimit, counted exactly by the TestClock's minute, confined
 * to the caller's workspace and, for a namespace-scoped key, its namespaces; who may read them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { expectError, INSUFFICIENT, TEST_ACTOR } from "../../../support/contract.ts";
import { ALL_GRANTS } from "../../../../src/services/auth/index.ts";
import { namespaceId } from "../ratelimit/support.ts";
import { DAY, runQuery, startOfDay } from "./support.ts";
import { analyticsRows, flushAnalytics } from "./store.ts";

const MINUTE = 60_000;
/** 2026-03-15 12:30:15 UTC. */
const START = Date.UTC(2026, 2, 15, 12, 30, 15);

let h: Harness;
let apiNs = "";
let loginNs = "";
let keyB = "";

const limit = (namespace: string, identifier: string, key?: string) =>
  h.post("/v2/ratelimit.limit", { namespace, identifier, limit: 2, duration: MINUTE }, key === undefined ? {} : { key });

const rows = async (query: string, key?: string) => {
  const res = await runQuery(h, query, key);
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data as Array<Record<string, unknown>>;
};

/**
 * default: in namespace `api`, 3 checks of one identifier at START (2 passed, 1 blocked) and one
 * the next day (passed); in `logins`, a multiLimit of two identifiers at START (2 passed). other:
 * 4 checks in its own `api` at START (2 passed, 2 blocked), which default must never see.
 */
beforeAll(async () => {
  h = await startHarness({ startMs: START });
  const ws = h.running.services.workspaces;
  await ws.setAnalytics("default", true, TEST_ACTOR);
  await ws.create({ name: "other", analyticsEnabled: true }, TEST_ACTOR);
  keyB = await h.rootKeyWith([...ALL_GRANTS], "other");
  for (let i = 0; i < 3; i++) expect((await limit("api", "alice")).status).toBe(200);
  const multi = await h.post("/v2/ratelimit.multiLimit", [
    { namespace: "logins", identifier: "a", limit: 1, duration: MINUTE }, { namespace: "logins", identifier: "b", limit: 1, duration: MINUTE },
  ]);
  expect(multi.body.data.passed).toBe(true);
  for (let i = 0; i < 4; i++) await limit("api", "alice", keyB);
  h.clock.advance(DAY);
  await limit("api", "alice");
  await flushAnalytics(h);
  apiNs = (await namespaceId(h, "api"))!;
  loginNs = (await namespaceId(h, "logins"))!;
});
afterAll(async () => { await h.stop(); });

const minute = (ms: number) => Math.floor(ms / MINUTE) * MINUTE;

describe("200: decisions counted exactly", () => {
  test("per minute and namespace: passed, blocked and total", async () => {
    expect(await rows("SELECT time, namespace_id, passed, blocked, total FROM ratelimits_per_minute_v1 ORDER BY time, namespace_id")).toEqual([
      ...[
        { time: minute(START), namespace_id: apiNs, passed: 2, blocked: 1, total: 3 },
        { time: minute(START), namespace_id: loginNs, passed: 2, blocked: 0, total: 2 },
      ].sort((a, b) => (a.namespace_id < b.namespace_id ? -1 : 1)), // as SQLite orders text: by its bytes
      { time: minute(START + DAY), namespace_id: apiNs, passed: 1, blocked: 0, total: 1 },
    ]);
  });

  test("per day, summed over namespaces; a time filter on the injected clock", async () => {
    expect(await rows("SELECT time, SUM(passed) AS passed, SUM(blocked) AS blocked FROM ratelimits_per_day_v1 GROUP BY time ORDER BY time")).toEqual([
      { time: startOfDay(START), passed: 4, blocked: 1 },
      { time: startOfDay(START) + DAY, passed: 1, blocked: 0 },
    ]);
    expect(await rows("SELECT SUM(total) AS n FROM ratelimits_per_hour_v1 WHERE time > now() - INTERVAL 1 HOUR")).toEqual([{ n: 1 }]);
  });

  test("a WHERE that is plainly false is an empty answer", async () => {
    for (const table of ["ratelimits_per_minute_v1", "ratelimits_per_day_v1"]) {
      expect(await rows(`SELECT count() AS n FROM ${table} WHERE 0`)).toEqual([{ n: 0 }]);
    }
  });

  test("per hour and per month hold the same counts in their buckets", async () => {
    expect(await rows("SELECT time, SUM(total) AS n FROM ratelimits_per_hour_v1 GROUP BY time ORDER BY time")).toEqual([
      { time: Date.UTC(2026, 2, 15, 12), n: 5 }, { time: Date.UTC(2026, 2, 16, 12), n: 1 },
    ]);
    expect(await rows("SELECT time, SUM(passed) AS passed, SUM(blocked) AS blocked FROM ratelimits_per_month_v1 GROUP BY time")).toEqual([
      { time: Date.UTC(2026, 2, 1), passed: 5, blocked: 1 },
    ]);
  });
});

describe("confinement", () => {
  test("another workspace's decisions never show, whatever the WHERE says (OR 1=1, its id)", async () => {
    const wsB = (await h.running.services.workspaces.get("other")).id;
    expect(await rows(`SELECT SUM(total) AS n FROM ratelimits_per_day_v1 WHERE workspace_id = '${wsB}' OR 1=1`)).toEqual([{ n: 6 }]);
    expect(await rows(`SELECT count() AS n FROM ratelimits_per_minute_v1 WHERE workspace_id = '${wsB}'`)).toEqual([{ n: 0 }]);
    expect(await rows("SELECT SUM(passed) AS passed, SUM(blocked) AS blocked FROM ratelimits_per_day_v1", keyB)).toEqual([{ passed: 2, blocked: 2 }]);
  });

  test("ratelimit.<namespaceId>.read_analytics reads that namespace's rows only, also with OR 1=1", async () => {
    const scoped = await h.rootKeyWith([`ratelimit.${loginNs}.read_analytics`]);
    expect(await rows(`SELECT namespace_id, SUM(total) AS n FROM ratelimits_per_day_v1 WHERE namespace_id = '${apiNs}' OR 1=1 GROUP BY namespace_id`, scoped))
      .toEqual([{ namespace_id: loginNs, n: 2 }]);
  });

  test("a scoped grant for a namespace of another workspace reads nothing", async () => {
    const foreign = (await namespaceId(h, "api", "other"))!;
    expect(await rows("SELECT count() AS n FROM ratelimits_per_minute_v1", await h.rootKeyWith([`ratelimit.${foreign}.read_analytics`]))).toEqual([{ n: 0 }]);
  });
});

describe("403: each family of tables needs its own read_analytics", () => {
  test("api.*.read_analytics alone does not read the rate-limit tables", async () => {
    const res = await runQuery(h, "SELECT SUM(total) FROM ratelimits_per_day_v1", await h.rootKeyWith(["api.*.read_analytics"]));
    expectError(h, res, 403, INSUFFICIENT,
      "Missing permission: 'ratelimit.*.read_analytics' or 'ratelimit.<namespaceId>.read_analytics' (to read ratelimits_per_day_v1)");
  });

  test("ratelimit.*.read_analytics alone reads them, but not the key verification tables, nor a query that reads both", async () => {
    const key = await h.rootKeyWith(["ratelimit.*.read_analytics"]);
    expect(await rows("SELECT SUM(total) AS n FROM ratelimits_per_month_v1", key)).toEqual([{ n: 6 }]);
    expectError(h, await runQuery(h, "SELECT SUM(count) FROM key_verifications_per_day_v1", key), 403, INSUFFICIENT,
      "Missing permission: 'api.*.read_analytics' or 'api.<apiId>.read_analytics' (to read key_verifications_per_day_v1)");
    const both = "SELECT time FROM ratelimits_per_day_v1 UNION ALL SELECT time FROM key_verifications_per_day_v1";
    expectError(h, await runQuery(h, both, key), 403, INSUFFICIENT);
    // A day row per namespace and day; no verifications in this workspace.
    expect(await rows(both, await h.rootKeyWith(["ratelimit.*.read_analytics", "api.*.read_analytics"]))).toHaveLength(3);
  });

  test("neither: 403 before the query runs, as before", async () => {
    const res = await runQuery(h, "SELECT SUM(total) FROM ratelimits_per_day_v1", await h.rootKeyWith(["ratelimit.*.limit"]));
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'api.*.read_analytics'");
  });
});

test("TOLLGATE_ANALYTICS=off: no decision is recorded", async () => {
  const off = await startHarness({ env: { TOLLGATE_ANALYTICS: "off" } });
  try {
    await off.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
    expect((await off.post("/v2/ratelimit.limit", { namespace: "api", identifier: "x", limit: 1, duration: MINUTE })).status).toBe(200);
    await flushAnalytics(off);
    expect(await analyticsRows(off, "ratelimit_decisions_minute")).toBe(0);
  } finally {
    await off.stop();
  }
});
