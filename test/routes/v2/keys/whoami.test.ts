import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import {
  allGrantsExcept, createApi, createKey, expectError, expectInvalid, KEY_NOT_FOUND, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";
import { createRole, getKey } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.whoami", { api: "whoami" });

const whoami = (key: string, rootKey?: string) => h.post("/v2/keys.whoami", { key }, rootKey === undefined ? {} : { key: rootKey });

describe("200", () => {
  test("a minimal key: only the required fields", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, prefix: "wm" });
    const res = await whoami(key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ keyId, start: key.slice(0, 7), enabled: true, createdAt: h.clock.now() });
  });

  test("answers what getKey answers, permissions (direct and through roles) sorted", async () => {
    await createRole(h, "whoami-reader", ["docs.read", "a.first"]);
    const { keyId, key } = await createKey(h, {
      apiId: h.apiId, name: "full", meta: { plan: "pro" }, externalId: "whoami-user", roles: ["whoami-reader"], permissions: ["z.last", "docs.read"],
      expires: h.clock.now() + 86_400_000, credits: { remaining: 7, refill: { interval: "monthly", amount: 10, refillDay: 3 } },
      ratelimits: [{ name: "calls", limit: 10, duration: 60_000, autoApply: true }],
    });
    const res = await whoami(key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(await getKey(h, keyId));
    expect(res.body.data.permissions).toEqual(["a.first", "docs.read", "z.last"]);
    expect(res.body.data.roles).toEqual(["whoami-reader"]);
    expect(res.body.data.identity.externalId).toBe("whoami-user");
    expect(res.body.data.plaintext).toBeUndefined();
  });

  test("read_key on the key's API alone is enough", async () => {
    const { key } = await createKey(h, { apiId: h.apiId });
    const res = await whoami(key, await h.rootKeyWith([`api.${h.apiId}.read_key`]));
    expect(res.status).toBe(200);
  });
});

describe("400", () => {
  test.each([
    ["no key", {}, "body.key"],
    ["an empty key", { key: "" }, "body.key"],
    ["a key over 512 characters", { key: "k".repeat(513) }, "body.key"],
    ["an unknown field", { key: "abc", keyId: "key_1" }, "body.keyId"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await h.post("/v2/keys.whoami", body), location);
  });
});

describe("401", () => {
  test("an unknown root key", async () => {
    expectError(h, await whoami("whatever", "not-a-root-key"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("404", () => {
  test("an unknown key", async () => {
    expectError(h, await whoami("sk_doesnotexist"), 404, KEY_NOT_FOUND, "We could not find the requested key.");
  });

  test("a deleted key", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    expect((await h.post("/v2/keys.deleteKey", { keyId })).status).toBe(200);
    expectError(h, await whoami(key), 404, KEY_NOT_FOUND, "We could not find the requested key.");
  });

  test("a key of another workspace: the unknown key's answer", async () => {
    const { key } = await createKey(h, { apiId: h.apiId });
    const other = await otherWorkspaceRootKey(h, "whoami-other");
    expectError(h, await whoami(key, other), 404, KEY_NOT_FOUND, "We could not find the requested key.");
  });
});

describe("403", () => {
  test("without read_key on the key's API: 403 naming the permission (DECISIONS)", async () => {
    const { key } = await createKey(h, { apiId: h.apiId });
    const res = await whoami(key, await h.rootKeyWith(allGrantsExcept("api.*.read_key")));
    expectError(h, res, 403, "service/authorization/insufficient_permissions");
    expect(res.body.error.detail).toContain("read_key");
    const otherApi = await createApi(h, "whoami-other-api");
    expectError(h, await whoami(key, await h.rootKeyWith([`api.${otherApi}.read_key`])), 403, "service/authorization/insufficient_permissions");
  });
});
