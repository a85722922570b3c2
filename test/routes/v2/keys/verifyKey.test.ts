import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { routeContract } from "../../../support/route-contract.ts";
import {
  allGrantsExcept, createApi, createKey, expectError, expectInvalid, createRole, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";

const h = routeContract("/v2/keys.verifyKey", { api: "verify" });

const verify = async (body: Record<string, unknown>, key?: string) => {
  const res = await h.post("/v2/keys.verifyKey", body, key === undefined ? {} : { key });
  expect(res.status).toBe(200);
  return res.body.data;
};
const BARE_NOT_FOUND = { valid: false, code: "NOT_FOUND" };

describe("200 VALID", () => {
  test("a bare key: valid, code, keyId and enabled only", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const res = await h.post("/v2/keys.verifyKey", { key: k.key });
    expect(res.body).toEqual({ meta: { requestId: expect.stringMatching(/^req_/) }, data: { valid: true, code: "VALID", keyId: k.keyId, enabled: true } });
  });

  test("name, meta, expires, permissions, roles and identity appear when set", async () => {
    await createRole(h, "viewer", ["reports.view"]);
    const k = await createKey(h, {
      apiId: h.apiId, name: "dash", meta: { plan: "team", seats: 5 }, expires: 4102444800000,
      permissions: ["reports.export"], roles: ["viewer"], externalId: "acct_9",
    });
    const identityId = (await h.post("/v2/keys.getKey", { keyId: k.keyId })).body.data.identity.id;
    expect(await verify({ key: k.key })).toEqual({
      valid: true, code: "VALID", keyId: k.keyId, name: "dash", meta: { plan: "team", seats: 5 }, expires: 4102444800000,
      enabled: true, permissions: ["reports.export", "reports.view"], roles: ["viewer"],
      identity: { id: identityId, externalId: "acct_9" },
    });
  });

  test("credits appear only on a key with limited usage, as the balance after this call", async () => {
    const limited = await createKey(h, { apiId: h.apiId, credits: { remaining: 10 } });
    expect(await verify({ key: limited.key })).toEqual({ valid: true, code: "VALID", keyId: limited.keyId, enabled: true, credits: 9 });
    expect((await verify({ key: limited.key })).credits).toBe(8);
    const unlimited = await createKey(h, { apiId: h.apiId, credits: { remaining: null } });
    expect("credits" in (await verify({ key: unlimited.key }))).toBe(false);
  });

  test("ratelimits appear only when a limit was checked", async () => {
    const quiet = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "manual", limit: 5, duration: 1000 }] });
    expect("ratelimits" in (await verify({ key: quiet.key }))).toBe(false);
    const auto = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "auto", limit: 5, duration: 1000, autoApply: true }] });
    const rlId = (await h.post("/v2/keys.getKey", { keyId: auto.keyId })).body.data.ratelimits[0].id;
    expect((await verify({ key: auto.key })).ratelimits).toEqual([
      { id: rlId, name: "auto", limit: 5, remaining: 4, reset: expect.any(Number), exceeded: false, duration: 1000, autoApply: true },
    ]);
  });

  test("a root key holding only `api.<apiId>.verify_key` may verify keys of that API", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    expect((await verify({ key: k.key }, await h.rootKeyWith([`api.${h.apiId}.verify_key`]))).code).toBe("VALID");
  });
});

describe("200 NOT_FOUND", () => {
  test("an unknown key: data is exactly {valid:false, code:NOT_FOUND}", async () => {
    expect(await verify({ key: "sk_doesnotexist" })).toEqual(BARE_NOT_FOUND);
  });

  test("the key string is looked up by its hash: the stored hash itself, a changed case or a space are unknown", async () => {
    const k = await createKey(h, { apiId: h.apiId, prefix: "case" });
    expect(await verify({ key: createHash("sha256").update(k.key).digest("base64") })).toEqual(BARE_NOT_FOUND);
    expect(await verify({ key: k.key.toUpperCase() })).toEqual(BARE_NOT_FOUND);
    expect(await verify({ key: `${k.key} ` })).toEqual(BARE_NOT_FOUND);
  });

  test("a key of another workspace, with every permission there", async () => {
    const k = await createKey(h, { apiId: h.apiId, name: "secret-name" });
    expect(await verify({ key: k.key }, await otherWorkspaceRootKey(h, "verify-other"))).toEqual(BARE_NOT_FOUND);
  });

  test("a key of a deleted API", async () => {
    const doomed = await createApi(h, "doomed");
    const k = await createKey(h, { apiId: doomed, name: "n" });
    await h.post("/v2/apis.deleteApi", { apiId: doomed });
    expect(await verify({ key: k.key })).toEqual(BARE_NOT_FOUND);
  });

  test("a root key without verify_key gets 200 NOT_FOUND, not 403", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    expect(await verify({ key: k.key }, await h.rootKeyWith(allGrantsExcept("api.*.verify_key")))).toEqual(BARE_NOT_FOUND);
  });

  test("verify_key on another API does not apply", async () => {
    const other = await createApi(h, "other");
    const k = await createKey(h, { apiId: h.apiId });
    expect(await verify({ key: k.key }, await h.rootKeyWith([`api.${other}.verify_key`]))).toEqual(BARE_NOT_FOUND);
  });
});

describe("200 DISABLED", () => {
  test("enabled:false at creation", async () => {
    const k = await createKey(h, { apiId: h.apiId, enabled: false, name: "off" });
    expect(await verify({ key: k.key })).toEqual({ valid: false, code: "DISABLED", keyId: k.keyId, name: "off", enabled: false });
  });

  test("disabled wins over expired, and no credit is spent", async () => {
    const k = await createKey(h, { apiId: h.apiId, enabled: false, expires: h.clock.now() - 1, credits: { remaining: 3 } });
    expect(await verify({ key: k.key })).toEqual({
      valid: false, code: "DISABLED", keyId: k.keyId, expires: h.clock.now() - 1, credits: 3, enabled: false,
    });
    expect((await h.post("/v2/keys.getKey", { keyId: k.keyId })).body.data.credits).toEqual({ remaining: 3 });
  });
});

describe("200 EXPIRED", () => {
  test("valid until server time passes `expires`, then expired", async () => {
    const expires = h.clock.now() + 60_000;
    const k = await createKey(h, { apiId: h.apiId, expires });
    expect(await verify({ key: k.key })).toEqual({ valid: true, code: "VALID", keyId: k.keyId, expires, enabled: true });
    h.clock.advance(59_999);
    expect((await verify({ key: k.key })).code).toBe("VALID");
    h.clock.advance(2);
    expect(await verify({ key: k.key })).toEqual({ valid: false, code: "EXPIRED", keyId: k.keyId, expires, enabled: true });
  });

  test("an `expires` in the past at creation makes the key expired at once", async () => {
    const expires = h.clock.now() - 1;
    const k = await createKey(h, { apiId: h.apiId, expires });
    expect(await verify({ key: k.key })).toEqual({ valid: false, code: "EXPIRED", keyId: k.keyId, expires, enabled: true });
  });

  test("expires 0 is expired", async () => {
    const k = await createKey(h, { apiId: h.apiId, expires: 0 });
    expect(await verify({ key: k.key })).toEqual({ valid: false, code: "EXPIRED", keyId: k.keyId, expires: 0, enabled: true });
  });

  test("an expired key spends no credit", async () => {
    const k = await createKey(h, { apiId: h.apiId, expires: h.clock.now() - 1, credits: { remaining: 2 } });
    expect((await verify({ key: k.key })).code).toBe("EXPIRED");
    expect((await h.post("/v2/keys.getKey", { keyId: k.keyId })).body.data.credits).toEqual({ remaining: 2 });
  });
});

describe("400", () => {
  test.each([
    ["key missing", {}, "body.key"],
    ["empty key", { key: "" }, "body.key"],
    ["key of 513 characters", { key: "k".repeat(513) }, "body.key"],
    ["key not a string", { key: 42 }, "body.key"],
    ["credits.cost as a string", { key: "k", credits: { cost: "1" } }, "body.credits.cost"],
    ["the v1 `h.apiId` field", { key: "k", apiId: "api_123" }, "body.apiId"],
  ])("%s", async (_label, body, location) => {
    expectInvalid(h, await h.post("/v2/keys.verifyKey", body), location);
  });

  // Upstream's words, with the position DECISIONS asks for (the key's own state is never reached).
  test.each([
    ["missing operand", "permission_1 AND", "Unexpected end of query. Expected a permission identifier or opening parenthesis."],
    ["unmatched parenthesis", "(permission_1 AND permission_2",
      "Missing closing parenthesis ')' at position 30. Every opening parenthesis must have a matching closing parenthesis."],
    ["empty parentheses", "permission_1 AND ()",
      "Empty parentheses found at position 18. Parentheses must contain at least one permission or expression."],
    ["operator at start", "AND permission_1", "Unexpected token 'AND' at position 0. Expected a permission identifier or opening parenthesis."],
  ])("400: permissions query syntax error in upstream's words (upstream v2_keys_verify_key 400_test 'invalid permissions query syntax/%s')", async (_label, permissions, detail) => {
    const k = await createKey(h, { apiId: h.apiId });
    expectError(h, await h.post("/v2/keys.verifyKey", { key: k.key, permissions }), 400, "user/bad_request/permissions_query_syntax_error", detail);
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post("/v2/keys.verifyKey", { key: "k" }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});
