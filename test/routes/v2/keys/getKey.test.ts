import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createApi, createKey, expectError, expectInvalid, INSUFFICIENT, KEY_NOT_FOUND, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";

const h = routeContract("/v2/keys.getKey", { api: "getkey" });

const get = h.call;
const MISSING_DETAIL = "We could not find the requested key.";

describe("200", () => {
  test("a bare key: only keyId, start, enabled and createdAt", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const res = await get({ keyId: k.keyId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      meta: { requestId: expect.stringMatching(/^req_/) },
      data: { keyId: k.keyId, start: k.key.slice(0, 4), enabled: true, createdAt: h.clock.now() },
    });
  });

  test("set fields are shown: name, meta, expires, permissions, credits, identity, ratelimits", async () => {
    const k = await createKey(h, {
      apiId: h.apiId, prefix: "gk", name: "svc", meta: { team: "core" }, expires: 4000000000000, permissions: ["b", "a"],
      externalId: "team_core", credits: { remaining: 3 }, ratelimits: [{ name: "calls", limit: 5, duration: 2000, autoApply: true }],
    });
    const res = await get({ keyId: k.keyId });
    expect(res.body.data).toEqual({
      keyId: k.keyId, start: k.key.slice(0, 7), enabled: true, createdAt: h.clock.now(), name: "svc", meta: { team: "core" },
      expires: 4000000000000, permissions: ["a", "b"], credits: { remaining: 3 },
      identity: { id: expect.stringMatching(/^id_/), externalId: "team_core" },
      ratelimits: [{ id: expect.stringMatching(/^rl_/), name: "calls", limit: 5, duration: 2000, autoApply: true }],
    });
  });

  test("decrypt:true returns the plaintext of a recoverable key", async () => {
    const k = await createKey(h, { apiId: h.apiId, prefix: "rec", recoverable: true });
    const res = await get({ keyId: k.keyId, decrypt: true });
    expect(res.body.data.plaintext).toBe(k.key);
  });

  test("without decrypt, a recoverable key shows no plaintext", async () => {
    const k = await createKey(h, { apiId: h.apiId, recoverable: true });
    for (const body of [{ keyId: k.keyId }, { keyId: k.keyId, decrypt: false }]) {
      expect("plaintext" in (await get(body)).body.data).toBe(false);
    }
  });

  test("decrypt:true on a key that is not recoverable shows no plaintext", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const res = await get({ keyId: k.keyId, decrypt: true });
    expect(res.status).toBe(200);
    expect("plaintext" in res.body.data).toBe(false);
  });

  test("`api.<apiId>.read_key` (+ `decrypt_key`) suffices", async () => {
    const k = await createKey(h, { apiId: h.apiId, recoverable: true });
    const root = await h.rootKeyWith([`api.${h.apiId}.read_key`, `api.${h.apiId}.decrypt_key`]);
    const res = await get({ keyId: k.keyId, decrypt: true }, root);
    expect(res.status).toBe(200);
    expect(res.body.data.plaintext).toBe(k.key);
  });
});

describe("400", () => {
  test.each([
    ["keyId missing", {}, "body.keyId"],
    ["keyId of 2 characters", { keyId: "ke" }, "body.keyId"],
    ["keyId of 256 characters", { keyId: `key_${"k".repeat(252)}` }, "body.keyId"],
    ["keyId outside [a-zA-Z0-9_]", { keyId: "key-1" }, "body.keyId"],
    ["decrypt not a boolean", { keyId: "key_123", decrypt: "true" }, "body.decrypt"],
    ["unknown field", { keyId: "key_123", apiId: "api_123" }, "body.apiId"],
  ])("%s", async (_label, body, location) => {
    expectInvalid(h, await get(body), location);
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await get({ keyId: "key_123" }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_key", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("api.*.read_key", { keyId: k.keyId }, h.apiId);
  });

  test("decrypt:true without decrypt_key", async () => {
    const k = await createKey(h, { apiId: h.apiId, recoverable: true });
    await h.expectDeniedWithout("api.*.decrypt_key", { keyId: k.keyId, decrypt: true }, h.apiId);
  });

  test("read_key on another API does not apply", async () => {
    const other = await createApi(h, "other-api");
    const k = await createKey(h, { apiId: h.apiId });
    expectError(h, await get({ keyId: k.keyId }, await h.rootKeyWith([`api.${other}.read_key`])), 403, INSUFFICIENT);
  });
});

describe("404", () => {
  test("unknown key", async () => {
    expectError(h, await get({ keyId: "key_doesnotexist" }), 404, KEY_NOT_FOUND, MISSING_DETAIL);
  });

  test("key of another workspace: the unknown key's answer", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId: k.keyId }, KEY_NOT_FOUND, MISSING_DETAIL);
  });

  test("key of a deleted API", async () => {
    const doomed = await createApi(h, "doomed");
    const k = await createKey(h, { apiId: doomed });
    await h.post("/v2/apis.deleteApi", { apiId: doomed });
    expectError(h, await get({ keyId: k.keyId }), 404, KEY_NOT_FOUND, MISSING_DETAIL);
  });

  test("an id of another kind (an API id) is not a key", async () => {
    expectError(h, await get({ keyId: h.apiId }), 404, KEY_NOT_FOUND);
  });
});
