/**
 * Verification events end to end: what keys.verifyKey records, that the rollups and totals of
 * every granularity equal the raw events after a mixed run across minute, hour, day and month
 * boundaries, and that a graceful restart keeps every event. Flushes are driven by hand.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, otherWorkspaceRootKey } from "../support/contract.ts";
import { rollupRows, rollupSource } from "../services/analytics/support.ts";
import type { Granularity } from "../../src/services/analytics/index.ts";

const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, mo - 1, d, h, mi, s);

let h: Harness;
afterEach(async () => { await h.stop(); });

const verify = async (body: Record<string, unknown>, key?: string): Promise<any> => {
  const res = await h.post("/v2/keys.verifyKey", body, key === undefined ? {} : { key });
  expect(res.status).toBe(200);
  return res.body.data;
};
const flush = () => h.running.services.verificationEvents.flush();

interface RawEvent {
  request_id: string;
  time: number; workspace_id: string; key_space_id: string; key_id: string; identity_id: string; external_id: string;
  outcome: string; tags: string; spent_credits: number; latency_ms: number;
}
const rawEvents = () => h.embedded.analytics.sqlite.query<RawEvent, []>(
  `SELECT request_id, time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, spent_credits, latency_ms
   FROM verification_events ORDER BY batch_id, position`,
).all();

describe("what is recorded", () => {
  test("every field of an event; spent credits are what was deducted", async () => {
    h = await startHarness({ startMs: utc(2026, 3, 10, 8, 15, 30) });
    const apiId = await createApi(h);
    const ks = (await h.post("/v2/audit.listLogs", { resourceId: apiId })).body.data[0].resources[1].id;
    const k = await createKey(h, { apiId, externalId: "acme", credits: { remaining: 4 } });
    const identityId = (await verify({ key: k.key, credits: { cost: 3 }, tags: ["path=/b", "path=/a"] })).identity.id;
    expect((await verify({ key: k.key, credits: { cost: 3 } })).code).toBe("USAGE_EXCEEDED");
    expect((await verify({ key: k.key, credits: { cost: 0 } })).code).toBe("VALID");
    await flush();
    const base = { time: utc(2026, 3, 10, 8, 15, 30), workspace_id: expect.stringMatching(/^ws_/), key_space_id: ks, key_id: k.keyId, identity_id: identityId, external_id: "acme" };
    expect(rawEvents()).toEqual([
      { ...base, request_id: "", outcome: "VALID", tags: '["path=/a","path=/b"]', spent_credits: 3, latency_ms: expect.any(Number) },
      { ...base, request_id: "", outcome: "USAGE_EXCEEDED", tags: "[]", spent_credits: 0, latency_ms: expect.any(Number) },
      { ...base, request_id: "", outcome: "VALID", tags: "[]", spent_credits: 0, latency_ms: expect.any(Number) },
    ]);
    for (const e of rawEvents()) {
      expect(e.latency_ms).toBeGreaterThanOrEqual(0);
      // Recorded to the microsecond.
      expect(String(e.latency_ms)).toMatch(/^\d+(\.\d{1,3})?$/);
    }
  });

  test("a key without credits spends none; a key without identity records ''", async () => {
    h = await startHarness();
    const k = await createKey(h, { apiId: await createApi(h) });
    await verify({ key: k.key, credits: { cost: 5 } });
    await flush();
    expect(rawEvents()).toMatchObject([{ key_id: k.keyId, outcome: "VALID", spent_credits: 0, identity_id: "", external_id: "" }]);
  });

  test("every outcome of a found key is recorded, also NOT_FOUND of a deleted key or a deleted API, or without verify permission", async () => {
    h = await startHarness();
    const apiId = await createApi(h);
    const mk = (body: Record<string, unknown> = {}) => createKey(h, { apiId, ...body });
    const [disabled, expired, perms, limited, deleted, masked] = await Promise.all([
      mk({ enabled: false }), mk({ expires: h.clock.now() - 1 }), mk({ permissions: ["a"] }),
      mk({ ratelimits: [{ name: "rl_requests", limit: 1, duration: 60_000, autoApply: true }] }), mk(), mk(),
    ]);
    await h.post("/v2/keys.deleteKey", { keyId: deleted!.keyId });
    const goneApi = await createApi(h, "gone");
    const orphan = await createKey(h, { apiId: goneApi });
    await h.post("/v2/apis.deleteApi", { apiId: goneApi });
    const codes = [
      (await verify({ key: disabled!.key })).code, (await verify({ key: expired!.key })).code,
      (await verify({ key: perms!.key, permissions: "b" })).code, (await verify({ key: limited!.key })).code,
      (await verify({ key: limited!.key })).code, (await verify({ key: deleted!.key })).code, (await verify({ key: orphan.key })).code,
      (await verify({ key: masked!.key }, await h.rootKeyWith([`api.${goneApi}.verify_key`]))).code,
    ];
    expect(codes).toEqual(["DISABLED", "EXPIRED", "INSUFFICIENT_PERMISSIONS", "VALID", "RATE_LIMITED", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND"]);
    await flush();
    // Written ordered by key id, each key's events in the order recorded; the deleted API's key has a row of its own.
    const inSpace = (keySpaceId: string) => rawEvents().filter((e) => e.key_space_id === keySpaceId).map((e) => [e.key_id, e.outcome]);
    const spaceOf = (keyId: string) => rawEvents().find((e) => e.key_id === keyId)!.key_space_id;
    const byKeyId = (rows: string[][]) => rows.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
    expect(inSpace(spaceOf(disabled!.keyId))).toEqual(byKeyId([
      [disabled!.keyId, "DISABLED"], [expired!.keyId, "EXPIRED"], [perms!.keyId, "INSUFFICIENT_PERMISSIONS"], [limited!.keyId, "VALID"],
      [limited!.keyId, "RATE_LIMITED"], [deleted!.keyId, "NOT_FOUND"], [masked!.keyId, "NOT_FOUND"],
    ]));
    expect(inSpace(spaceOf(orphan.keyId))).toEqual([[orphan.keyId, "NOT_FOUND"]]);
    expect(rawEvents()).toHaveLength(8);
  });

  test("nothing for an unknown key, a key of another workspace, or a request refused with 400", async () => {
    h = await startHarness();
    const k = await createKey(h, { apiId: await createApi(h) });
    await verify({ key: "unknown_key_123" });
    expect((await verify({ key: k.key }, await otherWorkspaceRootKey(h, "other"))).code).toBe("NOT_FOUND");
    expect((await h.post("/v2/keys.verifyKey", { key: k.key, permissions: "a AND" })).status).toBe(400);
    await flush();
    expect(rawEvents()).toEqual([]);
  });

  test("TOLLGATE_ANALYTICS=off records nothing", async () => {
    h = await startHarness({ env: { TOLLGATE_ANALYTICS: "off" } });
    const k = await createKey(h, { apiId: await createApi(h) });
    expect((await verify({ key: k.key })).code).toBe("VALID");
    expect(h.running.services.verificationEvents.pending).toBe(0);
    await h.restart();
    expect(rawEvents()).toEqual([]);
  });
});

describe("rollups equal the raw events after a mixed run", () => {
  /** Independent of the service's bucketing: the UTC calendar fields of each granularity. */
  const BUCKET: Record<string, (t: number) => number> = {
    minute: (t) => t - (((t % 60_000) + 60_000) % 60_000),
    hour: (t) => { const d = new Date(t); return utc(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours()); },
    day: (t) => { const d = new Date(t); return utc(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()); },
    month: (t) => { const d = new Date(t); return utc(d.getUTCFullYear(), d.getUTCMonth() + 1, 1); },
  };

  test("per granularity and bucket: count by outcome, credits, latency sum and max; buckets at UTC starts", async () => {
    h = await startHarness({ startMs: utc(2026, 1, 31, 23, 59, 20) });
    const apiId = await createApi(h);
    const keys = await Promise.all([
      createKey(h, { apiId, externalId: "acme" }),
      createKey(h, { apiId, credits: { remaining: 6 } }),
      createKey(h, { apiId, ratelimits: [{ name: "rl_requests", limit: 2, duration: 60_000, autoApply: true }] }),
      createKey(h, { apiId, permissions: ["docs.read"], externalId: "beta" }),
    ]);
    // Steps cross minute, hour, day and month boundaries; some land in the same buckets in later batches.
    const steps = [0, 20_000, 40_000, 60_000, 3_600_000, 86_400_000, 20_000, 28 * 86_400_000];
    const answers: string[] = [];
    for (const [i, step] of steps.entries()) {
      h.clock.advance(step);
      for (const [j, k] of keys.entries()) {
        const tags = (i + j) % 3 === 0 ? [] : (i + j) % 3 === 1 ? ["env=prod"] : ["route=/x", "env=prod"];
        const permissions = j === 3 ? { permissions: i % 2 === 0 ? "docs.write" : "docs.read OR x" } : {};
        answers.push((await verify({ key: k.key, tags, ...permissions, credits: { cost: 2 } })).code);
        answers.push((await verify({ key: k.key })).code);
      }
      if (i % 3 !== 2) await flush();
    }
    await flush();
    const raw = rawEvents();
    expect(raw.map((e) => e.outcome).sort()).toEqual(answers.sort());
    expect(new Set(answers)).toEqual(new Set(["VALID", "USAGE_EXCEEDED", "RATE_LIMITED", "INSUFFICIENT_PERMISSIONS"]));
    for (const [granularity, bucket] of Object.entries(BUCKET)) {
      const rows = rollupRows(h.embedded.analytics, granularity as Granularity);
      expect(rows.every((r) => bucket(r.time) === r.time)).toBe(true);
      const expected = new Map<string, { count: number; credits: number; latencySum: number; latencyMax: number }>();
      for (const e of raw) {
        const id = `${bucket(e.time)}|${e.key_id}|${e.identity_id}|${e.external_id}|${e.outcome}|${e.tags}`;
        const agg = expected.get(id) ?? { count: 0, credits: 0, latencySum: 0, latencyMax: 0 };
        expected.set(id, { count: agg.count + 1, credits: agg.credits + e.spent_credits, latencySum: agg.latencySum + e.latency_ms, latencyMax: Math.max(agg.latencyMax, e.latency_ms) });
      }
      const actual = new Map(rows.map((r) => [`${r.time}|${r.key_id}|${r.identity_id}|${r.external_id}|${r.outcome}|${r.tags}`,
        { count: r.count, credits: r.spent_credits, latencySum: r.latency_sum_ms, latencyMax: r.latency_max_ms }]));
      expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [id, want] of expected) {
        const got = actual.get(id)!;
        expect({ id, count: got.count, credits: got.credits }).toEqual({ id, count: want.count, credits: want.credits });
        expect(got.latencySum).toBeCloseTo(want.latencySum, 6);
        expect(got.latencyMax).toBeCloseTo(want.latencyMax, 9);
      }
      const total = h.embedded.analytics.sqlite.query<{ n: number }, []>(`SELECT sum("count") AS n FROM ${rollupSource(granularity as Granularity)}`).get()!.n;
      expect(total).toBe(raw.length);
      // The totals table: the same events counted per bucket, key space and outcome.
      const perOutcome = new Map<string, { count: number; credits: number }>();
      for (const e of raw) {
        const id = `${bucket(e.time)}|${e.key_space_id}|${e.outcome}`;
        const agg = perOutcome.get(id) ?? { count: 0, credits: 0 };
        perOutcome.set(id, { count: agg.count + 1, credits: agg.credits + e.spent_credits });
      }
      const totals = h.embedded.analytics.sqlite.query<{ time: number; key_space_id: string; outcome: string; count: number; spent_credits: number }, []>(
        `SELECT * FROM verification_totals_${granularity}`).all();
      expect(new Map(totals.map((t) => [`${t.time}|${t.key_space_id}|${t.outcome}`, { count: t.count, credits: t.spent_credits }]))).toEqual(perOutcome);
    }
    const months = h.embedded.analytics.sqlite.query<{ time: number }, []>("SELECT DISTINCT time FROM verification_rollups_month_all ORDER BY time").all();
    expect(months.map((m) => m.time)).toEqual([utc(2026, 1, 1), utc(2026, 2, 1), utc(2026, 3, 1)]);
  });
});

describe("stop and restart", () => {
  test("a graceful restart writes every buffered event", async () => {
    h = await startHarness();
    const apiId = await createApi(h);
    const plain = await createKey(h, { apiId });
    const metered = await createKey(h, { apiId, credits: { remaining: 100 } });
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => verify({ key: plain.key })),
      ...Array.from({ length: 10 }, () => verify({ key: metered.key })),
    ]);
    expect(answers.every((a) => a.valid)).toBe(true);
    expect(rawEvents()).toEqual([]);
    await h.restart();
    expect(rawEvents()).toHaveLength(20);
    expect(h.embedded.analytics.sqlite.query('SELECT sum(spent_credits) AS s, sum("count") AS n FROM verification_rollups_month_all').get()).toEqual({ s: 10, n: 20 });
  });

  test("verifications still waiting on their credit spend when stop begins are recorded too", async () => {
    h = await startHarness();
    const metered = await createKey(h, { apiId: await createApi(h), credits: { remaining: 100 } });
    const principal = h.running.services.auth.authenticate(`Bearer ${h.rootKey}`);
    const pending = Array.from({ length: 5 }, () => h.running.services.verification.verifyKey(principal, { key: metered.key, credits: { cost: 2 } }));
    await h.restart();
    expect((await Promise.all(pending)).map((r) => r.code)).toEqual(Array(5).fill("VALID"));
    expect(rawEvents().map((e) => [e.outcome, e.spent_credits])).toEqual(Array(5).fill(["VALID", 2]));
  });
});
