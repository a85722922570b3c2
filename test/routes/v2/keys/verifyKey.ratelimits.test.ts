/**
 * Key and identity rate limits in keys.verifyKey (upstream §6.3, spec "POST /v2/keys.verifyKey"):
 * autoApply at cost 1, named limits at the request's cost, inline limits, 412 for unknown names,
 * identity limits shared by the identity's keys, the key's limit winning a name clash, and
 * RATE_LIMITED carrying every checked limit's state, charged all-or-nothing.
 */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createKey, expectError } from "../../../support/contract.ts";

const MINUTE = 60_000;
const h = routeContract("/v2/keys.verifyKey", { api: "verify-ratelimits" });

let seq = 0;
const externalId = () => `ext_${++seq}_${Math.random().toString(36).slice(2, 8)}`;
const windowEnd = (durationMs: number) => Math.floor(h.clock.now() / durationMs) * durationMs + durationMs;

async function verify(body: Record<string, unknown>) {
  const res = await h.post("/v2/keys.verifyKey", body);
  if (res.status !== 200) throw new Error(`verifyKey answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The ids of a key's own limits, by name. */
async function limitIds(keyId: string): Promise<Record<string, string>> {
  const res = await h.post("/v2/keys.getKey", { keyId });
  return Object.fromEntries((res.body.data.ratelimits as Array<{ name: string; id: string }>).map((r) => [r.name, r.id]));
}

type State = { name: string; remaining: number; exceeded: boolean };
const byName = (states: State[]) => Object.fromEntries(states.map((s) => [s.name, [s.remaining, s.exceeded]]));

describe("autoApply", () => {
  test("runs on every verification with cost 1 and reports its full state", async () => {
    const { key, keyId } = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "requests", limit: 2, duration: MINUTE, autoApply: true }] });
    const id = (await limitIds(keyId)).requests;
    const state = { id, name: "requests", limit: 2, reset: windowEnd(MINUTE), duration: MINUTE, autoApply: true };
    expect((await verify({ key })).ratelimits).toEqual([{ ...state, remaining: 1, exceeded: false }]);
    expect((await verify({ key, credits: { cost: 5 } })).ratelimits).toEqual([{ ...state, remaining: 0, exceeded: false }]);
    const denied = await verify({ key });
    expect(denied).toMatchObject({ valid: false, code: "RATE_LIMITED", keyId });
    expect(denied.ratelimits).toEqual([{ ...state, remaining: 0, exceeded: true }]);
  });

  test("a limit without autoApply is not checked unless named", async () => {
    const { key } = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "manual", limit: 1, duration: MINUTE }] });
    for (let i = 0; i < 3; i++) {
      const data = await verify({ key });
      expect(data.code).toBe("VALID");
      expect(data.ratelimits).toBeUndefined();
    }
  });
});

describe("named limits", () => {
  test("a named limit runs at the request's cost; the other limits do not take that cost", async () => {
    const { key } = await createKey(h, {
      apiId: h.apiId,
      ratelimits: [
        { name: "requests", limit: 10, duration: MINUTE, autoApply: true },
        { name: "tokens", limit: 100, duration: MINUTE },
        { name: "other", limit: 5, duration: MINUTE },
      ],
    });
    const data = await verify({ key, ratelimits: [{ name: "tokens", cost: 30 }] });
    expect(data.code).toBe("VALID");
    expect(byName(data.ratelimits)).toEqual({ requests: [9, false], tokens: [70, false] });
    const check = await verify({ key, ratelimits: [{ name: "other", cost: 0 }, { name: "tokens", cost: 0 }] });
    expect(byName(check.ratelimits)).toEqual({ requests: [8, false], tokens: [70, false], other: [5, false] });
  });

  test("naming an autoApply limit applies it once, at the request's cost (default 1)", async () => {
    const { key } = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "requests", limit: 10, duration: MINUTE, autoApply: true }] });
    expect(byName((await verify({ key, ratelimits: [{ name: "requests", cost: 4 }] })).ratelimits)).toEqual({ requests: [6, false] });
    expect(byName((await verify({ key, ratelimits: [{ name: "requests" }] })).ratelimits)).toEqual({ requests: [5, false] });
  });

  test("an inline limit + duration is an ad-hoc limit on the key (id \"\"), also replacing a configured one of that name", async () => {
    const { key } = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "burst", limit: 100, duration: MINUTE, autoApply: true }] });
    const inline = { name: "adhoc", limit: 2, duration: 1000 };
    const first = await verify({ key, ratelimits: [inline] });
    expect(first.ratelimits).toContainEqual({ id: "", name: "adhoc", limit: 2, remaining: 1, reset: windowEnd(1000), exceeded: false, duration: 1000, autoApply: false });
    await verify({ key, ratelimits: [inline] });
    expect((await verify({ key, ratelimits: [inline] })).code).toBe("RATE_LIMITED");
    const replaced = await verify({ key, ratelimits: [{ name: "burst", limit: 1, duration: 2000 }] });
    expect(replaced.ratelimits).toEqual([expect.objectContaining({ id: "", name: "burst", limit: 1, remaining: 0, autoApply: false })]);
  });

  test("an unknown name is 412; the detail names the key (and its identity when it has one)", async () => {
    const { key, keyId } = await createKey(h, { apiId: h.apiId });
    const res = await h.post("/v2/keys.verifyKey", { key, ratelimits: [{ name: "nope" }] });
    expectError(h, res, 412, "service/application/precondition_failed",
      `ratelimit 'nope' was requested but does not exist for key '${keyId}' and there is no identity connected.`);
    const ext = externalId();
    const withIdentity = await createKey(h, { apiId: h.apiId, externalId: ext });
    const res2 = await h.post("/v2/keys.verifyKey", { key: withIdentity.key, ratelimits: [{ name: "nope" }] });
    expectError(h, res2, 412, "service/application/precondition_failed");
    expect(res2.body.error.detail).toMatch(new RegExp(`^ratelimit 'nope' was requested but does not exist for key '${withIdentity.keyId}' nor identity: 'id_\\w+' external ID: '${ext}'$`));
  });
});

describe("identity limits", () => {
  test("are shared by every key of the identity", async () => {
    const ext = externalId();
    const created = await h.post("/v2/identities.createIdentity", { externalId: ext, ratelimits: [{ name: "shared", limit: 3, duration: MINUTE, autoApply: true }] });
    expect(created.status).toBe(200);
    const a = await createKey(h, { apiId: h.apiId, externalId: ext });
    const b = await createKey(h, { apiId: h.apiId, externalId: ext });
    const codes = [];
    for (const key of [a.key, b.key, a.key, b.key]) codes.push((await verify({ key })).code);
    expect(codes).toEqual(["VALID", "VALID", "VALID", "RATE_LIMITED"]);
    const other = await createKey(h, { apiId: h.apiId, externalId: externalId() });
    expect((await verify({ key: other.key })).code).toBe("VALID");
  });

  test("a key limit with the same name wins over the identity's", async () => {
    const ext = externalId();
    await h.post("/v2/identities.createIdentity", { externalId: ext, ratelimits: [{ name: "requests", limit: 1, duration: MINUTE, autoApply: true }] });
    const { key, keyId } = await createKey(h, { apiId: h.apiId, externalId: ext, ratelimits: [{ name: "requests", limit: 5, duration: MINUTE, autoApply: true }] });
    const keyLimitId = (await limitIds(keyId)).requests;
    const states = [];
    for (let i = 0; i < 5; i++) states.push((await verify({ key })).ratelimits);
    expect(states.every((s) => s.length === 1 && s[0].id === keyLimitId && s[0].limit === 5)).toBe(true);
    expect((await verify({ key })).code).toBe("RATE_LIMITED");
  });

  test("a named identity limit runs at the request's cost", async () => {
    const ext = externalId();
    await h.post("/v2/identities.createIdentity", { externalId: ext, ratelimits: [{ name: "tokens", limit: 10, duration: MINUTE }] });
    const { key } = await createKey(h, { apiId: h.apiId, externalId: ext });
    expect(byName((await verify({ key, ratelimits: [{ name: "tokens", cost: 7 }] })).ratelimits)).toEqual({ tokens: [3, false] });
  });
});

describe("RATE_LIMITED", () => {
  test("carries every checked limit's state; nothing is charged when one is exceeded, and no credits are spent", async () => {
    const { key } = await createKey(h, {
      apiId: h.apiId, credits: { remaining: 100 },
      ratelimits: [
        { name: "per-minute", limit: 2, duration: MINUTE, autoApply: true },
        { name: "per-month", limit: 200, duration: 2_592_000_000, autoApply: true },
      ],
    });
    await verify({ key });
    await verify({ key });
    const denied = await verify({ key });
    expect(denied).toMatchObject({ valid: false, code: "RATE_LIMITED", credits: 98 });
    expect(byName(denied.ratelimits)).toEqual({ "per-minute": [0, true], "per-month": [198, false] });
    h.clock.advance(2 * MINUTE);
    const after = await verify({ key });
    expect(after).toMatchObject({ code: "VALID", credits: 97 });
    expect(byName(after.ratelimits)).toEqual({ "per-minute": [1, false], "per-month": [197, false] });
  });
});
