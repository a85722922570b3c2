/**
 * POST /v1/keys.verifyKey under TOLLGATE_V1_PATHS=on: upstream v1's request and bare answer, no
 * root key, the same decisions as v2. Tests named as the upstream v1 route test they follow
 * (apps/api/src/routes/v1_keys_verifyKey*.test.ts) where there is one.
 */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../support/route-contract.ts";
import { createApi, createKey, otherWorkspaceRootKey } from "../../support/contract.ts";
import { createRole } from "../../support/key-management.ts";

const PATH = "/v1/keys.verifyKey";
const h = routeContract(PATH, { api: "v1-verify", env: { TOLLGATE_V1_PATHS: "on" } });

/** A v1 verification as upstream's v1 SDK sends it: no root key. */
const v1 = (body: Record<string, unknown>) => h.post(PATH, body, { key: null });

const verified = async (body: Record<string, unknown>) => {
  const res = await v1(body);
  expect(res.status).toBe(200);
  return res.body;
};

describe("bare answers without a root key", () => {
  test("returns valid: a bare body, no envelope, the request id inside", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const res = await v1({ key: k.key, apiId: h.apiId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      keyId: k.keyId, valid: true, code: "VALID", enabled: true, permissions: [], roles: [], requestId: res.headers.get("x-request-id"),
    });
  });

  test("every field of the key: name, ownerId (the identity's externalId), meta, expires, permissions, roles, identity", async () => {
    await createRole(h, "v1-viewer", ["reports.view"]);
    const k = await createKey(h, {
      apiId: h.apiId, name: "dash", meta: { plan: "team" }, expires: h.clock.now() + 3_600_000,
      permissions: ["reports.export"], roles: ["v1-viewer"], externalId: "acct_v1",
    });
    const identityId = (await h.post("/v2/keys.getKey", { keyId: k.keyId })).body.data.identity.id;
    expect(await verified({ key: k.key })).toEqual({
      keyId: k.keyId, valid: true, code: "VALID", name: "dash", ownerId: "acct_v1", meta: { plan: "team" }, expires: h.clock.now() + 3_600_000,
      enabled: true, permissions: ["reports.export", "reports.view"], roles: ["v1-viewer"],
      identity: { id: identityId, externalId: "acct_v1", meta: {} }, requestId: expect.stringMatching(/^req_/),
    });
  });

  test("a root key the client sends anyway (upstream's v1 SDK does) is not looked at, even an unknown one", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    expect((await h.post(PATH, { key: k.key })).body.code).toBe("VALID");
    expect((await h.post(PATH, { key: k.key }, { key: "tg_not_a_root_key_at_all" })).body.code).toBe("VALID");
  });

  test("NOT_FOUND: valid, code and requestId only", async () => {
    expect(await verified({ key: "tg_not_a_key_of_anyone" })).toEqual({ valid: false, code: "NOT_FOUND", requestId: expect.stringMatching(/^req_/) });
    const deleted = await createKey(h, { apiId: h.apiId });
    expect((await h.post("/v2/keys.deleteKey", { keyId: deleted.keyId })).status).toBe(200);
    expect(await verified({ key: deleted.key })).toEqual({ valid: false, code: "NOT_FOUND", requestId: expect.stringMatching(/^req_/) });
  });

  test("a key of another workspace verifies in its own workspace (no root key chooses one)", async () => {
    const otherRoot = await otherWorkspaceRootKey(h, "v1-other-ws");
    const otherApi = await createApi(h, "v1-other-api", otherRoot);
    const k = await createKey(h, { apiId: otherApi }, otherRoot);
    expect((await verified({ key: k.key })).code).toBe("VALID");
    expect((await verified({ key: k.key, apiId: otherApi })).code).toBe("VALID");
  });

  test("DISABLED", async () => {
    const k = await createKey(h, { apiId: h.apiId, enabled: false });
    expect(await verified({ key: k.key })).toMatchObject({ keyId: k.keyId, valid: false, code: "DISABLED", enabled: false });
  });

  test("EXPIRED once the clock passes `expires`", async () => {
    const expires = h.clock.now() + 60_000;
    const k = await createKey(h, { apiId: h.apiId, expires });
    expect((await verified({ key: k.key })).code).toBe("VALID");
    h.clock.advance(60_000);
    expect(await verified({ key: k.key })).toMatchObject({ keyId: k.keyId, valid: false, code: "EXPIRED", expires });
  });

  test("USAGE_EXCEEDED with `remaining`; `remaining.cost` spends that many", async () => {
    const k = await createKey(h, { apiId: h.apiId, credits: { remaining: 3 } });
    expect(await verified({ key: k.key, remaining: { cost: 2 } })).toMatchObject({ valid: true, code: "VALID", remaining: 1 });
    expect(await verified({ key: k.key, remaining: { cost: 2 } })).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", remaining: 1 });
    expect(await verified({ key: k.key })).toMatchObject({ valid: true, code: "VALID", remaining: 0 });
    expect(await verified({ key: k.key })).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", remaining: 0 });
  });
});

describe("ratelimits", () => {
  test("returns valid (ad-hoc limits in the request)", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const body = await verified({
      key: k.key, apiId: h.apiId,
      ratelimits: [{ name: "10/10s", cost: 4, limit: 10, duration: 10_000 }, { name: "1/1min", cost: 1, limit: 1, duration: 60_000 }],
    });
    expect(body).toMatchObject({ valid: true, code: "VALID" });
  });

  test("returns RATE_LIMITED, with the limit that denied as `ratelimit`", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const body = await verified({
      key: k.key, apiId: h.apiId,
      ratelimits: [{ name: "10/10s", cost: 4, limit: 10, duration: 10_000 }, { name: "1/1min", cost: 2, limit: 1, duration: 60_000 }],
    });
    expect(body).toMatchObject({ valid: false, code: "RATE_LIMITED", ratelimit: { limit: 1, remaining: 0, reset: expect.any(Number) } });
  });

  test("the key's own auto-applied limit: `ratelimit` {limit, remaining, reset}, then RATE_LIMITED", async () => {
    const k = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "default", limit: 2, duration: 60_000, autoApply: true }] });
    expect((await verified({ key: k.key })).ratelimit).toEqual({ limit: 2, remaining: 1, reset: expect.any(Number) });
    expect((await verified({ key: k.key })).ratelimit).toEqual({ limit: 2, remaining: 0, reset: expect.any(Number) });
    expect(await verified({ key: k.key })).toMatchObject({ valid: false, code: "RATE_LIMITED", ratelimit: { limit: 2, remaining: 0 } });
  });

  test("the deprecated `ratelimit.cost` is the cost of the key's `default` limit", async () => {
    const k = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "default", limit: 5, duration: 60_000 }] });
    expect(await verified({ key: k.key, ratelimit: { cost: 5 } })).toMatchObject({ code: "VALID", ratelimit: { limit: 5, remaining: 0 } });
    expect((await verified({ key: k.key, ratelimit: { cost: 1 } })).code).toBe("RATE_LIMITED");
  });

  test("without config returns error: a named limit the key does not have and no limit given is a 400", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const res = await v1({ key: k.key, apiId: h.apiId, ratelimits: [{ name: "missing_config", cost: 4 }, { name: "1/1min", cost: 2, limit: 1, duration: 60_000 }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("ratelimit 'missing_config' was requested but does not exist") });
  });
});

describe("with identity", () => {
  test("a second key is rejected: the identity's limit is shared by its keys", async () => {
    const created = await h.post("/v2/identities.createIdentity", { externalId: "v1-shared-owner", ratelimits: [{ name: "10per5m", limit: 10, duration: 300_000 }] });
    expect(created.status).toBe(200);
    const key1 = await createKey(h, { apiId: h.apiId, externalId: "v1-shared-owner" });
    const key2 = await createKey(h, { apiId: h.apiId, externalId: "v1-shared-owner" });
    for (let i = 0; i < 10; i++) expect((await verified({ key: key1.key, ratelimits: [{ name: "10per5m" }] })).code).toBe("VALID");
    expect(await verified({ key: key2.key, ratelimits: [{ name: "10per5m" }] })).toMatchObject({ valid: false, code: "RATE_LIMITED", ratelimit: { limit: 10, remaining: 0 } });
  });
});

describe("authorization.permissions: v1's query object", () => {
  test("{or: [{and: [...]}, ...]} and {and: [...]}: VALID or INSUFFICIENT_PERMISSIONS as the key's permissions satisfy it", async () => {
    const k = await createKey(h, { apiId: h.apiId, permissions: ["dns.record.read", "dns.record.update"] });
    const check = async (permissions: unknown) => (await verified({ key: k.key, authorization: { permissions } })).code;
    expect(await check({ or: [{ and: ["dns.record.read", "dns.record.update"] }, "admin"] })).toBe("VALID");
    expect(await check("dns.record.read")).toBe("VALID");
    expect(await check({ and: ["dns.record.read", "admin"] })).toBe("INSUFFICIENT_PERMISSIONS");
    expect(await check({ or: ["admin", { and: ["dns.record.read", "dns.record.delete"] }] })).toBe("INSUFFICIENT_PERMISSIONS");
    expect(await check("admin")).toBe("INSUFFICIENT_PERMISSIONS");
  });

  test("a malformed query is 400 BAD_REQUEST, v2's syntax error in v1's body", async () => {
    const k = await createKey(h, { apiId: h.apiId, permissions: ["a"] });
    for (const permissions of [{ xor: ["a"] }, { and: [] }, { and: ["a"], or: ["a"] }, "a OR b", "and", 7, null]) {
      const res = await v1({ key: k.key, authorization: { permissions } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "BAD_REQUEST", docs: expect.stringContaining("permissions_query_syntax_error") });
    }
  });
});

describe("apiId", () => {
  test("a key of another API answers FORBIDDEN, as upstream's v1 did; its own API VALID", async () => {
    const otherApi = await createApi(h, "v1-second-api");
    const k = await createKey(h, { apiId: h.apiId });
    expect(await verified({ key: k.key, apiId: otherApi })).toMatchObject({ keyId: k.keyId, valid: false, code: "FORBIDDEN" });
    expect((await verified({ key: k.key, apiId: h.apiId })).code).toBe("VALID");
  });

  test("DISABLED comes before the API's check, as upstream's order", async () => {
    const otherApi = await createApi(h, "v1-third-api");
    const k = await createKey(h, { apiId: h.apiId, enabled: false });
    expect((await verified({ key: k.key, apiId: otherApi })).code).toBe("DISABLED");
  });
});

describe("errors in v1's body", () => {
  test("a body without `key`: 400 {error: {code: BAD_REQUEST, docs, message, requestId}}", async () => {
    const res = await v1({ apiId: h.apiId });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { code: "BAD_REQUEST", docs: expect.stringMatching(/^http.*\/docs\/api-reference\/errors-v2\//), message: expect.any(String), requestId: res.headers.get("x-request-id") },
    });
    expect(res.headers.get("deprecation")).toMatch(/^@\d+$/);
  });

  test("a body that is not JSON: 400 BAD_REQUEST", async () => {
    const res = await fetch(h.url + PATH, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("BAD_REQUEST");
  });

  test("a body over 64 KiB is 413 before any root key is asked for", async () => {
    const res = await v1({ key: "x", tags: ["y".repeat(70_000)] });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("BAD_REQUEST");
  });
});
