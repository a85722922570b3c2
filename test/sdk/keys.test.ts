/**
 * The official SDK (`@unkey/api` 2.5) against tollgate: every `keys.*` method we serve must parse
 * our responses (a ResponseValidationError would mean a wrong shape) and map our errors to its classes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Unkey } from "@unkey/api";
import { BadRequestErrorResponse, ForbiddenErrorResponse, NotFoundErrorResponse } from "@unkey/api/models/errors";
import { startHarness, type Harness } from "../support/harness.ts";
import { sdkClient } from "./client.ts";

let h: Harness;
let unkey: Unkey;
let apiId: string;
beforeAll(async () => {
  h = await startHarness();
  unkey = sdkClient(h, h.rootKey);
  apiId = (await unkey.apis.createApi({ name: "sdk-keys" })).data.apiId;
  await unkey.permissions.createRole({ name: "sdk.reader", description: "Reads", permissions: ["sdk.read"] });
  await unkey.permissions.createRole({ name: "sdk.writer" });
});
afterAll(async () => { await h.stop(); });

async function newKey(extra: Record<string, unknown> = {}): Promise<{ keyId: string; key: string }> {
  return (await unkey.keys.createKey({ apiId, prefix: "sdk", ...extra })).data;
}

describe("keys", () => {
  test("createKey, getKey, whoami and verifyKey parse a fully populated key", async () => {
    const { keyId, key } = await newKey({
      name: "full", meta: { plan: "pro" }, externalId: "sdk-user", roles: ["sdk.reader"], permissions: ["sdk.direct"],
      expires: h.clock.now() + 86_400_000, credits: { remaining: 10, refill: { interval: "monthly", amount: 100, refillDay: 1 } },
      ratelimits: [{ name: "sdk_limit", limit: 10, duration: 60_000, autoApply: true }], recoverable: true,
    });
    const got = await unkey.keys.getKey({ keyId, decrypt: true });
    expect(got.data).toMatchObject({ keyId, name: "full", plaintext: key, permissions: ["sdk.direct", "sdk.read"], roles: ["sdk.reader"] });
    expect(got.data.credits).toEqual({ remaining: 10, refill: { interval: "monthly", amount: 100, refillDay: 1 } });
    const me = await unkey.keys.whoami({ key });
    expect(me.data.keyId).toBe(keyId);
    expect(me.data.identity?.externalId).toBe("sdk-user");
    const verified = await unkey.keys.verifyKey({ key, permissions: "sdk.read AND sdk.direct" });
    expect(verified.data).toMatchObject({ valid: true, code: "VALID", keyId, credits: 9 });
  });

  test("getKey, whoami, listKeys and verifyKey parse a key whose identity has meta and limits", async () => {
    await unkey.identities.createIdentity({ externalId: "sdk-rich", meta: { tier: "gold" }, ratelimits: [{ name: "shared", limit: 5, duration: 60_000, autoApply: true }] });
    const { keyId, key } = await newKey({ externalId: "sdk-rich", recoverable: true, credits: { remaining: 3, refill: { interval: "daily", amount: 3 } } });
    const identity = {
      id: expect.stringMatching(/^id_/), externalId: "sdk-rich", meta: { tier: "gold" },
      ratelimits: [{ id: expect.stringMatching(/^rl_/), name: "shared", limit: 5, duration: 60_000, autoApply: true }],
    };
    expect((await unkey.keys.getKey({ keyId })).data.identity).toEqual(identity);
    expect((await unkey.keys.whoami({ key })).data.identity).toEqual(identity);
    const listed = (await unkey.apis.listKeys({ apiId, externalId: "sdk-rich", decrypt: true })).result.data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ keyId, plaintext: key, identity, credits: { remaining: 3, refill: { interval: "daily", amount: 3 } } });
    const verified = (await unkey.keys.verifyKey({ key })).data;
    expect(verified).toMatchObject({ valid: true, credits: 2, identity: { externalId: "sdk-rich", meta: { tier: "gold" } } });
    expect(verified.ratelimits?.map((r) => [r.name, r.limit, r.remaining, r.exceeded])).toEqual([["shared", 5, 4, false]]);
  });

  test("verifyKey returns a meta of nearly 1 MB exactly, loaded and then cached; so do getKey and whoami", async () => {
    const meta = { plan: "enterprise", records: Array.from({ length: 10_000 }, (_, i) => ({ id: i, name: `user-${i} «ü» "q"`, on: i % 2 === 0, score: i / 7 })) };
    const { keyId, key } = await newKey({ meta });
    for (let i = 0; i < 2; i++) expect((await unkey.keys.verifyKey({ key })).data).toMatchObject({ valid: true, keyId, meta });
    expect((await unkey.keys.getKey({ keyId })).data.meta).toEqual(meta);
    expect((await unkey.keys.whoami({ key })).data.meta).toEqual(meta);
  });

  test("updateKey with every field, then null clears; verifyKey sees each change", async () => {
    const { keyId, key } = await newKey();
    const updated = await unkey.keys.updateKey({
      keyId, name: "renamed", externalId: "sdk-owner", meta: { a: 1 }, expires: h.clock.now() + 60_000, enabled: false,
      credits: { remaining: 3, refill: { interval: "daily", amount: 5 } }, ratelimits: [{ name: "sdk_rl", limit: 2, duration: 1000, autoApply: false }],
      roles: ["sdk.writer"], permissions: ["sdk.updated"],
    });
    expect(updated.data).toEqual({});
    expect((await unkey.keys.verifyKey({ key })).data).toMatchObject({ code: "DISABLED", name: "renamed", identity: { externalId: "sdk-owner" } });
    await unkey.keys.updateKey({ keyId, name: null, externalId: null, meta: null, expires: null, credits: null, enabled: true });
    const after = await unkey.keys.verifyKey({ key });
    expect(after.data.code).toBe("VALID");
    expect([after.data.name, after.data.identity, after.data.credits, after.data.expires]).toEqual([undefined, undefined, undefined, undefined]);
  });

  test("updateCredits: set, increment, decrement, set null", async () => {
    const { keyId, key } = await newKey({ credits: { remaining: 1, refill: { interval: "daily", amount: 9 } } });
    expect((await unkey.keys.updateCredits({ keyId, operation: "set", value: 5 })).data).toEqual({ remaining: 5, refill: { interval: "daily", amount: 9 } });
    expect((await unkey.keys.updateCredits({ keyId, operation: "increment", value: 2 })).data.remaining).toBe(7);
    expect((await unkey.keys.updateCredits({ keyId, operation: "decrement", value: 100 })).data.remaining).toBe(0);
    expect((await unkey.keys.verifyKey({ key })).data.code).toBe("USAGE_EXCEEDED");
    expect((await unkey.keys.updateCredits({ keyId, operation: "set", value: null })).data).toEqual({ remaining: null });
    expect((await unkey.keys.verifyKey({ key })).data.code).toBe("VALID");
  });

  test("addPermissions, removePermissions, setPermissions", async () => {
    const { keyId, key } = await newKey();
    const added = await unkey.keys.addPermissions({ keyId, permissions: ["sdk.a", "sdk.b"] });
    expect(added.data.map((p) => p.slug)).toEqual(["sdk.a", "sdk.b"]);
    expect(added.data[0]).toEqual({ id: expect.stringMatching(/^perm_/), name: "sdk.a", slug: "sdk.a", description: "Auto-created permission: sdk.a" });
    expect((await unkey.keys.removePermissions({ keyId, permissions: ["sdk.a"] })).data.map((p) => p.slug)).toEqual(["sdk.b"]);
    expect((await unkey.keys.setPermissions({ keyId, permissions: ["sdk.c"] })).data.map((p) => p.slug)).toEqual(["sdk.c"]);
    expect((await unkey.keys.verifyKey({ key, permissions: "sdk.c" })).data.code).toBe("VALID");
    expect((await unkey.keys.setPermissions({ keyId, permissions: [] })).data).toEqual([]);
  });

  test("addRoles, removeRoles, setRoles", async () => {
    const { keyId, key } = await newKey();
    const added = await unkey.keys.addRoles({ keyId, roles: ["sdk.writer", "sdk.reader"] });
    expect(added.data.map((r) => r.name)).toEqual(["sdk.reader", "sdk.writer"]);
    expect(added.data[0]).toMatchObject({ name: "sdk.reader", description: "Reads", permissions: [{ slug: "sdk.read" }] });
    expect(added.data[1]?.permissions).toBeUndefined();
    expect((await unkey.keys.removeRoles({ keyId, roles: ["sdk.writer"] })).data.map((r) => r.name)).toEqual(["sdk.reader"]);
    expect((await unkey.keys.verifyKey({ key, permissions: "sdk.read" })).data.code).toBe("VALID");
    expect((await unkey.keys.setRoles({ keyId, roles: [] })).data).toEqual([]);
  });

  test("rerollKey gives a working key; the old one expires", async () => {
    const { keyId, key } = await newKey({ name: "old" });
    const fresh = await unkey.keys.rerollKey({ keyId, expiration: 0 });
    expect(fresh.data.keyId).not.toBe(keyId);
    expect((await unkey.keys.verifyKey({ key: fresh.data.key })).data).toMatchObject({ valid: true, name: "old" });
    expect((await unkey.keys.verifyKey({ key })).data.code).toBe("EXPIRED");
  });

  test("deleteKey, soft and permanent", async () => {
    for (const permanent of [false, true]) {
      const { keyId, key } = await newKey();
      expect((await unkey.keys.deleteKey({ keyId, permanent })).data).toEqual({});
      expect((await unkey.keys.verifyKey({ key })).data.code).toBe("NOT_FOUND");
      await expect(unkey.keys.getKey({ keyId })).rejects.toBeInstanceOf(NotFoundErrorResponse);
    }
  });
});

describe("errors", () => {
  test("400, 403 and 404 map to the SDK's error classes", async () => {
    const { keyId } = await newKey();
    const bad = await unkey.keys.updateCredits({ keyId, operation: "increment" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestErrorResponse);
    const limited = sdkClient(h, await h.rootKeyWith(["api.*.read_key"]));
    await expect(limited.keys.updateKey({ keyId, name: "x" })).rejects.toBeInstanceOf(ForbiddenErrorResponse);
    await expect(limited.keys.whoami({ key: "sdk_nope" })).rejects.toBeInstanceOf(NotFoundErrorResponse);
    await expect(unkey.keys.addRoles({ keyId, roles: ["missing.role"] })).rejects.toBeInstanceOf(NotFoundErrorResponse);
  });
});
