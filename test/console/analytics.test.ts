/**
 * The console's analytics queries, run through analytics.getVerifications against a real service:
 * they are accepted and count what was verified; their rows shape into the charts' series.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  busiestKeys, decisionsOverTime, lastUsed, toChart, toDecisionsChart, totalsBy, verificationsByApi, verificationsOverTime, type RangeName,
} from "../../src/console/app/analytics.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, TEST_ACTOR } from "../support/contract.ts";

const HOUR_MS = 3_600_000;
let h: Harness;
let keySpaceId: string;
let keys: Array<{ keyId: string; key: string }>;

const rows = async (query: string) => {
  const res = await h.post("/v2/analytics.getVerifications", { query });
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
  return res.body.data as Array<Record<string, unknown>>;
};

beforeAll(async () => {
  h = await startHarness({ startMs: Date.UTC(2026, 5, 1, 12, 30) });
  await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  const apiId = await createApi(h, "console-analytics");
  keySpaceId = (await h.post("/v2/apis.listApis", {})).body.data.find((a: { id: string }) => a.id === apiId).keySpaceId;
  keys = [await createKey(h, { apiId }), await createKey(h, { apiId, credits: { remaining: 1 } })];
  await h.post("/v2/keys.verifyKey", { key: keys[0]!.key });
  h.clock.advance(2 * HOUR_MS);
  for (let i = 0; i < 3; i++) await h.post("/v2/keys.verifyKey", { key: keys[1]!.key });
  // Rate-limit decisions: in `api`, 2 passed and 1 blocked; in `logins`, 1 passed.
  for (const namespace of ["api", "api", "api", "logins"]) await h.post("/v2/ratelimit.limit", { namespace, identifier: "u", limit: 2, duration: 60_000 });
  await h.running.services.verificationEvents.flush();
});
afterAll(async () => {
  await h.stop();
});

describe("the queries count what was verified", () => {
  for (const range of ["24h", "7d", "30d"] as RangeName[]) {
    test(`${range}: over time, in total, for the API and for one key`, async () => {
      const total = (r: Array<Record<string, unknown>>) => r.reduce((s, x) => s + Number(x.total), 0);
      expect(total(await rows(verificationsOverTime(range)))).toBe(4);
      expect(total(await rows(verificationsOverTime(range, { keySpaceId })))).toBe(4);
      expect(total(await rows(verificationsOverTime(range, { keySpaceId, keyId: keys[1]!.keyId })))).toBe(3);
      expect(totalsBy(await rows(verificationsByApi(range)), "key_space_id").get(keySpaceId)).toEqual({ VALID: 2, USAGE_EXCEEDED: 2 });
      expect((await rows(busiestKeys(range))).map((r) => [r.key_id, Number(r.total)])).toEqual([[keys[1]!.keyId, 3], [keys[0]!.keyId, 1]]);
    });
  }

  test("last used: each key's latest minute", async () => {
    const byKey = new Map((await rows(lastUsed(keySpaceId, keys.map((k) => k.keyId)))).map((r) => [r.key_id, Number(r.last_used)]));
    expect(byKey.get(keys[0]!.keyId)).toBe(Date.UTC(2026, 5, 1, 12, 30));
    expect(byKey.get(keys[1]!.keyId)).toBe(Date.UTC(2026, 5, 1, 14, 30));
  });

  test("an id that is not one is refused before it reaches SQL", () => {
    expect(() => verificationsOverTime("24h", { keyId: "x' OR 1=1 --" })).toThrow("not an id");
    expect(() => decisionsOverTime("24h", "x' OR 1=1 --")).toThrow("not an id");
  });

  for (const range of ["24h", "7d", "30d"] as RangeName[]) {
    test(`${range}: rate-limit decisions, of every namespace and of one`, async () => {
      const sums = (r: Array<Record<string, unknown>>) => [r.reduce((s, x) => s + Number(x.passed), 0), r.reduce((s, x) => s + Number(x.blocked), 0)];
      expect(sums(await rows(decisionsOverTime(range)))).toEqual([3, 1]);
      const logins = (await h.post("/v2/ratelimit.listNamespaces", {})).body.data.find((n: { name: string }) => n.name === "logins").id;
      expect(sums(await rows(decisionsOverTime(range, logins)))).toEqual([1, 0]);
    });
  }
});

describe("toChart", () => {
  test("one series per outcome, VALID first, over the range's buckets ending at the latest row, gaps 0", () => {
    const chart = toChart([
      { time: 0, outcome: "RATE_LIMITED", total: 2 }, { time: 0, outcome: "VALID", total: 5 }, { time: 2 * HOUR_MS, outcome: "VALID", total: 1 },
    ], HOUR_MS, 4);
    expect(chart).toEqual({ timesMs: [-HOUR_MS, 0, HOUR_MS, 2 * HOUR_MS], series: [{ label: "VALID", values: [0, 5, 0, 1] }, { label: "RATE_LIMITED", values: [0, 2, 0, 0] }] });
    expect(toChart([], HOUR_MS, 4)).toEqual({ timesMs: [], series: [] });
  });

  test("decisions: two series, passed then blocked, gaps 0", () => {
    const chart = toDecisionsChart([{ time: 0, passed: 3, blocked: 1 }, { time: 2 * HOUR_MS, passed: 0, blocked: 4 }], HOUR_MS, 3);
    expect(chart).toEqual({ timesMs: [0, HOUR_MS, 2 * HOUR_MS], series: [{ label: "passed", values: [3, 0, 0] }, { label: "blocked", values: [1, 0, 4] }] });
    expect(toDecisionsChart([], HOUR_MS, 3)).toEqual({ timesMs: [], series: [] });
  });

  test("a row older than the buckets before the latest one widens the chart rather than being dropped", () => {
    const chart = toChart([{ time: 0, outcome: "VALID", total: 1 }, { time: 3 * HOUR_MS, outcome: "VALID", total: 1 }], HOUR_MS, 2);
    expect(chart.timesMs).toEqual([0, HOUR_MS, 2 * HOUR_MS, 3 * HOUR_MS]);
    expect(chart.series[0]!.values).toEqual([1, 0, 0, 1]);
  });
});
