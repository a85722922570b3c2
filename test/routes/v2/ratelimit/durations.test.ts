/**
 * Window lengths are 1 second to 30 days everywhere (DECISIONS.md "Bounds"): ad-hoc limits in
 * keys.verifyKey, overrides, key and identity limits; outside is a 400 naming the field. Limits
 * stored by an older version with longer windows are applied clamped to 30 days.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { createApi, createKey, expectInvalid } from "../../../support/contract.ts";
import { MINUTE, createNamespace, setOverride, uniq, windowEnd } from "./support.ts";

const THIRTY_DAYS = 2_592_000_000;
const TOO_LONG = [THIRTY_DAYS + 1, Number.MAX_SAFE_INTEGER];

let h: Harness;
let apiId: string;
beforeAll(async () => {
  h = await startHarness();
  apiId = await createApi(h, "durations");
});
afterAll(async () => { await h.stop(); });

describe("keys.verifyKey ad-hoc limits", () => {
  test.each([999, ...TOO_LONG])("400: duration %p, naming the field", async (duration) => {
    const { key } = await createKey(h, { apiId });
    const res = await h.post("/v2/keys.verifyKey", { key, ratelimits: [{ name: "adhoc", limit: 5, duration }] });
    expectInvalid(h, res, "body.ratelimits[0].duration");
  });

  test.each([1000, THIRTY_DAYS])("200: duration %p is applied, reset at the end of its window", async (duration) => {
    const { key } = await createKey(h, { apiId });
    const res = await h.post("/v2/keys.verifyKey", { key, ratelimits: [{ name: "adhoc", limit: 5, duration }] });
    expect(res.status).toBe(200);
    expect(res.body.data.ratelimits).toEqual([expect.objectContaining({ name: "adhoc", duration, remaining: 4, reset: windowEnd(h.clock.now(), duration) })]);
  });
});

describe("ratelimit.setOverride", () => {
  test.each(TOO_LONG)("400: duration %p, naming the field", async (duration) => {
    const ns = uniq("ns");
    await createNamespace(h, ns);
    expectInvalid(h, await h.post("/v2/ratelimit.setOverride", { namespace: ns, identifier: "u", limit: 1, duration }), "body.duration");
  });

  test("200: 30 days", async () => {
    const ns = uniq("ns");
    await createNamespace(h, ns);
    expect((await h.post("/v2/ratelimit.setOverride", { namespace: ns, identifier: "u", limit: 1, duration: THIRTY_DAYS })).status).toBe(200);
  });
});

describe("key and identity limits", () => {
  const limit = (duration: number) => [{ name: "requests", limit: 5, duration }];

  test.each([999, ...TOO_LONG])("400: createKey and updateKey with duration %p", async (duration) => {
    expectInvalid(h, await h.post("/v2/keys.createKey", { apiId, ratelimits: limit(duration) }), "body.ratelimits[0].duration");
    const { keyId } = await createKey(h, { apiId });
    expectInvalid(h, await h.post("/v2/keys.updateKey", { keyId, ratelimits: limit(duration) }), "body.ratelimits[0].duration");
  });

  test.each([999, ...TOO_LONG])("400: createIdentity and updateIdentity with duration %p", async (duration) => {
    const externalId = uniq("ext");
    expectInvalid(h, await h.post("/v2/identities.createIdentity", { externalId, ratelimits: limit(duration) }), "body.ratelimits[0].duration");
    expect((await h.post("/v2/identities.createIdentity", { externalId })).status).toBe(200);
    expectInvalid(h, await h.post("/v2/identities.updateIdentity", { identity: externalId, ratelimits: limit(duration) }), "body.ratelimits[0].duration");
  });

  test("200: 1000 and 30 days", async () => {
    expect((await h.post("/v2/keys.createKey", { apiId, ratelimits: [...limit(1000), { name: "monthly", limit: 5, duration: THIRTY_DAYS }] })).status).toBe(200);
    expect((await h.post("/v2/identities.createIdentity", { externalId: uniq("ext"), ratelimits: limit(THIRTY_DAYS) })).status).toBe(200);
  });
});

describe("limits stored by an older version with longer windows", () => {
  test("a key limit is applied and reported with a 30-day window", async () => {
    const { key, keyId } = await createKey(h, { apiId, ratelimits: [{ name: "old", limit: 2, duration: MINUTE, autoApply: true }] });
    await h.records.run("UPDATE ratelimit_configs SET duration_ms = ? WHERE key_id = ?", Number.MAX_SAFE_INTEGER, keyId);
    const data = (await h.post("/v2/keys.verifyKey", { key })).body.data;
    expect(data.ratelimits).toEqual([expect.objectContaining({ name: "old", duration: THIRTY_DAYS, remaining: 1, reset: windowEnd(h.clock.now(), THIRTY_DAYS) })]);
  });

  test("an override is applied with a 30-day window", async () => {
    const ns = uniq("ns");
    await createNamespace(h, ns);
    const overrideId = await setOverride(h, ns, "old", 2);
    await h.records.run("UPDATE ratelimit_overrides SET duration_ms = ? WHERE id = ?", Number.MAX_SAFE_INTEGER, overrideId);
    // Rows edited behind the service's back: it is told, as anyone who edits them directly must.
    h.running.services.ratelimits.forgetCached();
    const res = await h.post("/v2/ratelimit.limit", { namespace: ns, identifier: "old", limit: 100, duration: MINUTE });
    expect(res.body.data).toMatchObject({ success: true, limit: 2, remaining: 1, reset: windowEnd(h.clock.now(), THIRTY_DAYS), overrideId });
  });
});
