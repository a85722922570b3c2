import { describe, expect, test } from "bun:test";
import { base58 } from "@scure/base";
import { routeContract } from "../../../support/route-contract.ts";
import { BASE58, createApi, createKey, expectError, expectInvalid, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, countRows, createRole, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.rerollKey", { api: "reroll", setup: (h) => createRole(h, "reroll-role", ["via.role"]) });

const MINUTE = 60_000;
const reroll = h.call;

async function rerolled(keyId: string, expiration = 0): Promise<{ keyId: string; key: string }> {
  const res = await reroll({ keyId, expiration });
  expect(res.status).toBe(200);
  expect(Object.keys(res.body.data).sort()).toEqual(["key", "keyId"]);
  return res.body.data;
}

describe("200: the new key", () => {
  test("copies name, meta, identity, enabled, credits, refill, expiry, permissions, roles and limits (new ids)", async () => {
    const expires = h.clock.now() + 7 * 86_400_000;
    const old = await createKey(h, {
      apiId: h.apiId, prefix: "rr", name: "rotating", meta: { tier: "gold" }, externalId: "reroll-user", permissions: ["direct.perm"], roles: ["reroll-role"],
      expires, credits: { remaining: 42, refill: { interval: "monthly", amount: 100, refillDay: 5 } },
      ratelimits: [{ name: "per_min", limit: 10, duration: MINUTE, autoApply: true }],
    });
    const before = await getKey(h, old.keyId);
    const fresh = await rerolled(old.keyId, 3_600_000);
    expect(fresh.keyId).not.toBe(old.keyId);
    expect(fresh.key).not.toBe(old.key);
    const view = await getKey(h, fresh.keyId);
    const { keyId: _a, start: _b, createdAt: _c, updatedAt: _d, ratelimits: oldLimits, ...copied } = before;
    expect(view).toMatchObject({ ...copied, expires, createdAt: h.clock.now() });
    expect(view.ratelimits).toHaveLength(1);
    expect(view.ratelimits[0]).toEqual({ ...oldLimits[0], id: expect.stringMatching(/^rl_/) });
    expect(view.ratelimits[0].id).not.toBe(oldLimits[0].id);
    const result = await verify(h, fresh.key, { permissions: "direct.perm AND via.role" });
    expect(result).toMatchObject({ valid: true, keyId: fresh.keyId, credits: 41, identity: { externalId: "reroll-user" } });
  });

  test("keeps the prefix (also one with underscores) and uses 16 random bytes", async () => {
    for (const prefix of ["sk", "my_app"]) {
      const old = await createKey(h, { apiId: h.apiId, prefix, byteLength: 32 });
      const fresh = await rerolled(old.keyId);
      expect(fresh.key.startsWith(`${prefix}_`)).toBe(true);
      expect(base58.decode(fresh.key.slice(prefix.length + 1)).length).toBe(16);
      expect((await getKey(h, fresh.keyId)).start).toBe(fresh.key.slice(0, prefix.length + 5));
    }
    const plain = await rerolled((await createKey(h, { apiId: h.apiId })).keyId);
    expect(plain.key).toMatch(BASE58);
  });

  test("a disabled key gives a disabled key", async () => {
    const old = await createKey(h, { apiId: h.apiId, enabled: false });
    const fresh = await rerolled(old.keyId, MINUTE);
    expect((await verify(h, fresh.key)).code).toBe("DISABLED");
  });

  test("a recoverable key gives a recoverable key whose plaintext decrypts", async () => {
    const old = await createKey(h, { apiId: h.apiId, recoverable: true });
    const fresh = await rerolled(old.keyId, MINUTE);
    const res = await h.post("/v2/keys.getKey", { keyId: fresh.keyId, decrypt: true });
    expect(res.body.data.plaintext).toBe(fresh.key);
  });

  test("writes one key.reroll audit entry naming both keys", async () => {
    const old = await createKey(h, { apiId: h.apiId });
    const fresh = await rerolled(old.keyId);
    const rows = await auditRows(h, "key.reroll", old.keyId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.resources.map((r) => r.id)).toEqual([fresh.keyId, old.keyId, h.apiId]);
  });
});

describe("200: the old key", () => {
  test("expiration 0: the very next verification of the old key is EXPIRED", async () => {
    const old = await createKey(h, { apiId: h.apiId });
    expect((await verify(h, old.key)).code).toBe("VALID");
    await rerolled(old.keyId, 0);
    expect(await verify(h, old.key)).toMatchObject({ code: "EXPIRED", expires: h.clock.now() });
  });

  test("expires now + expiration rounded up to the next whole minute, and verifies until then", async () => {
    h.clock.set(Math.floor(h.clock.now() / MINUTE) * MINUTE + 1_234);
    const old = await createKey(h, { apiId: h.apiId });
    expect((await verify(h, old.key)).code).toBe("VALID");
    await rerolled(old.keyId, 90_000);
    const expiresAt = Math.ceil((h.clock.now() + 90_000) / MINUTE) * MINUTE;
    expect((await getKey(h, old.keyId)).expires).toBe(expiresAt);
    h.clock.set(expiresAt - 1);
    expect((await verify(h, old.key)).code).toBe("VALID");
    h.clock.set(expiresAt);
    expect((await verify(h, old.key)).code).toBe("EXPIRED");
  });

  test("an expiry already on a whole minute is kept as is", async () => {
    h.clock.set(Math.ceil(h.clock.now() / MINUTE) * MINUTE);
    const old = await createKey(h, { apiId: h.apiId });
    await rerolled(old.keyId, 2 * MINUTE);
    expect((await getKey(h, old.keyId)).expires).toBe(h.clock.now() + 2 * MINUTE);
  });
});

describe("200: a reroll never extends the old key's life", () => {
  test("an old key due to expire before the grace period ends keeps its expiry; the new key copies it", async () => {
    const expires = h.clock.now() + 10 * MINUTE;
    const old = await createKey(h, { apiId: h.apiId, expires });
    const fresh = await rerolled(old.keyId, 24 * 60 * MINUTE);
    expect((await getKey(h, old.keyId)).expires).toBe(expires);
    expect((await getKey(h, fresh.keyId)).expires).toBe(expires);
    h.clock.set(expires);
    expect((await verify(h, old.key)).code).toBe("EXPIRED");
  });

  test("an already expired key stays expired at its own time", async () => {
    const expires = h.clock.now() - MINUTE;
    const old = await createKey(h, { apiId: h.apiId, expires });
    await rerolled(old.keyId, 60 * MINUTE);
    expect((await getKey(h, old.keyId)).expires).toBe(expires);
    expect((await verify(h, old.key)).code).toBe("EXPIRED");
  });

  test("an old key expiring after the grace period gets the earlier grace expiry", async () => {
    h.clock.set(Math.ceil(h.clock.now() / MINUTE) * MINUTE);
    const old = await createKey(h, { apiId: h.apiId, expires: h.clock.now() + 60 * MINUTE });
    await rerolled(old.keyId, 5 * MINUTE);
    expect((await getKey(h, old.keyId)).expires).toBe(h.clock.now() + 5 * MINUTE);
  });
});

describe("400", () => {
  test.each([
    ["no expiration", {}, "body.expiration"],
    ["a negative expiration", { expiration: -1 }, "body.expiration"],
    ["a fractional expiration", { expiration: 1.5 }, "body.expiration"],
    ["an expiration past the maximum", { expiration: 4102444800001 }, "body.expiration"],
    ["an unknown field", { expiration: 0, prefix: "x" }, "body.prefix"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await reroll({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without create_key (update_key is not enough); nothing changes", async () => {
    const old = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("api.*.create_key", { keyId: old.keyId, expiration: 0 }, h.apiId);
    expect((await verify(h, old.key)).code).toBe("VALID");
  });

  test("a recoverable key without encrypt_key; no key is created", async () => {
    const old = await createKey(h, { apiId: h.apiId, recoverable: true });
    const workspaceId = (await h.running.services.workspaces.get("default")).id;
    const keysBefore = await countRows(h, "keys", "workspace_id", workspaceId);
    await h.expectDeniedWithout("api.*.encrypt_key", { keyId: old.keyId, expiration: 0 }, h.apiId);
    expect(await countRows(h, "keys", "workspace_id", workspaceId)).toBe(keysBefore);
  });
});

describe("412", () => {
  test("a recoverable key of an API that no longer stores encrypted keys; nothing changes", async () => {
    const storing = await createApi(h, "reroll-unencrypted");
    const old = await createKey(h, { apiId: storing, recoverable: true });
    await h.records.run("UPDATE key_spaces SET store_encrypted_keys = FALSE WHERE id = (SELECT key_space_id FROM apis WHERE id = ?)", storing);
    const keysBefore = await h.records.count("keys");
    const res = await reroll({ keyId: old.keyId, expiration: 0 });
    expectError(h, res, 412, "service/application/precondition_failed", "This API does not support key encryption.");
    expect(await h.records.count("keys")).toBe(keysBefore);
    expect((await verify(h, old.key)).code).toBe("VALID");
  });
});

describe("404", () => {
  test("an unknown key", async () => {
    expectError(h, await reroll({ keyId: "key_unknown", expiration: 0 }), 404, KEY_NOT_FOUND, "The specified key was not found.");
  });

  test("a deleted key", async () => {
    const old = await createKey(h, { apiId: h.apiId });
    await h.post("/v2/keys.deleteKey", { keyId: old.keyId });
    expectError(h, await reroll({ keyId: old.keyId, expiration: 0 }), 404, KEY_NOT_FOUND, "The specified key was not found.");
  });

  test("a key of another workspace", async () => {
    const old = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId: old.keyId, expiration: 0 }, KEY_NOT_FOUND, "The specified key was not found.");
    expect((await verify(h, old.key)).code).toBe("VALID");
  });
});
