import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createApi, createKey, expectError, expectInvalid, INSUFFICIENT, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, createRole, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.updateKey", {
  api: "update",
  setup: async (h) => {
    await createRole(h, "editor", ["docs.write"]);
    await createRole(h, "viewer", ["docs.read"]);
  },
});

const update = h.call;

async function expectUpdated(body: Record<string, unknown>): Promise<void> {
  const res = await update(body);
  expect({ status: res.status, data: res.body.data }).toEqual({ status: 200, data: {} });
}

describe("200: three-state fields", () => {
  test("a field left out is unchanged, null clears it, a value sets it", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, name: "before", meta: { a: 1 }, expires: h.clock.now() + 3_600_000 });
    await expectUpdated({ keyId, name: "after" });
    let view = await getKey(h, keyId);
    expect({ name: view.name, meta: view.meta, expires: view.expires }).toEqual({ name: "after", meta: { a: 1 }, expires: h.clock.now() + 3_600_000 });
    await expectUpdated({ keyId, name: null, meta: null, expires: null });
    view = await getKey(h, keyId);
    expect([view.name, view.meta, view.expires]).toEqual([undefined, undefined, undefined]);
    expect(view.updatedAt).toBe(h.clock.now());
  });

  test("enabled: false makes the very next verification DISABLED, true makes it VALID again", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    expect((await verify(h, key)).code).toBe("VALID");
    await expectUpdated({ keyId, enabled: false });
    expect(await verify(h, key)).toMatchObject({ valid: false, code: "DISABLED", enabled: false });
    await expectUpdated({ keyId, enabled: true });
    expect((await verify(h, key)).code).toBe("VALID");
  });

  test("expires: a past time gives EXPIRED at once; null removes the expiry", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    expect((await verify(h, key)).code).toBe("VALID");
    await expectUpdated({ keyId, expires: h.clock.now() - 1 });
    expect((await verify(h, key)).code).toBe("EXPIRED");
    await expectUpdated({ keyId, expires: null });
    expect((await verify(h, key)).code).toBe("VALID");
  });

  test("name and meta changes reach the next verification", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, name: "old", meta: { v: 1 } });
    expect(await verify(h, key)).toMatchObject({ name: "old", meta: { v: 1 } });
    await expectUpdated({ keyId, name: "new", meta: { v: 2 } });
    expect(await verify(h, key)).toMatchObject({ name: "new", meta: { v: 2 } });
  });

  test("externalId links an identity (upserted, reused) and null unlinks it", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    expect((await verify(h, key)).identity).toBeUndefined();
    await expectUpdated({ keyId, externalId: "user_42" });
    const linked = await verify(h, key);
    expect(linked.identity.externalId).toBe("user_42");
    const second = await createKey(h, { apiId: h.apiId, externalId: "user_42" });
    expect((await getKey(h, second.keyId)).identity.id).toBe(linked.identity.id);
    await expectUpdated({ keyId, externalId: null });
    expect((await verify(h, key)).identity).toBeUndefined();
  });
});

describe("200: credits", () => {
  test("remaining sets the balance, seen by the next verification", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 1 } });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 0 });
    expect((await verify(h, key)).code).toBe("USAGE_EXCEEDED");
    await expectUpdated({ keyId, credits: { remaining: 5 } });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 4 });
  });

  test("credits: null makes the key unlimited and clears the refill", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 0, refill: { interval: "daily", amount: 5 } } });
    expect((await verify(h, key)).code).toBe("USAGE_EXCEEDED");
    await expectUpdated({ keyId, credits: null });
    const result = await verify(h, key);
    expect(result.code).toBe("VALID");
    expect(result.credits).toBeUndefined();
    expect((await getKey(h, keyId)).credits).toBeUndefined();
  });

  test("remaining: null also clears the refill; refill: null clears only the refill", async () => {
    const refill = { interval: "monthly", amount: 50, refillDay: 15 };
    const { keyId } = await createKey(h, { apiId: h.apiId, credits: { remaining: 9, refill } });
    await expectUpdated({ keyId, credits: { refill: null } });
    expect((await getKey(h, keyId)).credits).toEqual({ remaining: 9 });
    await expectUpdated({ keyId, credits: { refill } });
    expect((await getKey(h, keyId)).credits).toEqual({ remaining: 9, refill });
    await expectUpdated({ keyId, credits: { remaining: null } });
    expect((await getKey(h, keyId)).credits).toBeUndefined();
  });

  test("an unlimited key gets a refill together with its first balance", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    await expectUpdated({ keyId, credits: { remaining: 2, refill: { interval: "monthly", amount: 10, refillDay: 31 } } });
    expect((await getKey(h, keyId)).credits).toEqual({ remaining: 2, refill: { interval: "monthly", amount: 10, refillDay: 31 } });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 1 });
  });

  test("a daily refill without refillDay; the balance is kept when only the refill changes", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, credits: { remaining: 3 } });
    await expectUpdated({ keyId, credits: { refill: { interval: "daily", amount: 100 } } });
    expect((await getKey(h, keyId)).credits).toEqual({ remaining: 3, refill: { interval: "daily", amount: 100 } });
  });
});

describe("200: ratelimits, permissions, roles", () => {
  test("ratelimits replace by name: a kept name keeps its id, a new name is added, a missing one deleted", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "keep", limit: 5, duration: 60_000 }, { name: "drop", limit: 5, duration: 60_000 }] });
    const before = (await getKey(h, keyId)).ratelimits;
    expect((await verify(h, key, { ratelimits: [{ name: "keep" }] })).code).toBe("VALID");
    await expectUpdated({ keyId, ratelimits: [{ name: "keep", limit: 1, duration: 60_000, autoApply: true }, { name: "added", limit: 3, duration: 1000, autoApply: false }] });
    const after = (await getKey(h, keyId)).ratelimits;
    expect(after.map((l: { name: string }) => l.name)).toEqual(["added", "keep"]);
    expect(after.find((l: { name: string }) => l.name === "keep")).toEqual({ ...before.find((l: { name: string }) => l.name === "keep"), limit: 1, autoApply: true });
    // The new limit of 1 (auto-applied) is already used up by the call before the update.
    expect((await verify(h, key)).code).toBe("RATE_LIMITED");
    await expectUpdated({ keyId, ratelimits: [] });
    expect((await getKey(h, keyId)).ratelimits).toBeUndefined();
    expect((await verify(h, key)).code).toBe("VALID");
  });

  test("permissions replace the direct permissions (missing ones created) and reach the next verification", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, permissions: ["p.old"] });
    expect((await verify(h, key, { permissions: "p.new" })).code).toBe("INSUFFICIENT_PERMISSIONS");
    await expectUpdated({ keyId, permissions: ["p.new"] });
    expect(await verify(h, key, { permissions: "p.new" })).toMatchObject({ code: "VALID", permissions: ["p.new"] });
    expect((await verify(h, key, { permissions: "p.old" })).code).toBe("INSUFFICIENT_PERMISSIONS");
    const perm = await h.post("/v2/permissions.getPermission", { permission: "p.new" });
    expect(perm.body.data.description).toBe("Auto-created permission: p.new");
  });

  test("roles replace the key's roles and reach the next verification", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, roles: ["viewer"] });
    expect(await verify(h, key, { permissions: "docs.read" })).toMatchObject({ code: "VALID", roles: ["viewer"] });
    await expectUpdated({ keyId, roles: ["editor"] });
    expect(await verify(h, key, { permissions: "docs.write" })).toMatchObject({ code: "VALID", roles: ["editor"] });
    expect((await verify(h, key, { permissions: "docs.read" })).code).toBe("INSUFFICIENT_PERMISSIONS");
  });

  test("writes one key.update audit entry naming the key and its API", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, name: "audited" });
    await expectUpdated({ keyId, enabled: false, meta: { x: 1 } });
    const rows = await auditRows(h, "key.update", keyId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.resources).toEqual([{ type: "key", id: keyId, name: "audited" }, { type: "api", id: h.apiId, name: "update" }]);
    expect(rows[0]?.description).toContain("enabled");
  });

  test("a per-API update_key grant is enough", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    expect((await update({ keyId, name: "scoped" }, await h.rootKeyWith([`api.${h.apiId}.update_key`]))).status).toBe(200);
  });
});

describe("400", () => {
  test.each([
    ["a monthly refill without refillDay", { credits: { refill: { interval: "monthly", amount: 5 } } }, "body.credits.refill.refillDay", "`refillDay` must be provided when the refill interval is `monthly`."],
    ["a daily refill with refillDay", { credits: { refill: { interval: "daily", amount: 5, refillDay: 3 } } }, "body.credits.refill.refillDay", "`refillDay` must not be provided when the refill interval is `daily`."],
    ["two limits with one name", { ratelimits: [{ name: "dup", limit: 1, duration: 1000, autoApply: false }, { name: "dup", limit: 2, duration: 1000, autoApply: false }] }, "body.ratelimits", "Ratelimit with name 'dup' is already defined in the request"],
  ])("%s", async (_name, body, location, detail) => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const res = await update({ keyId, ...body });
    expectInvalid(h, res, location);
    expect(res.body.error.detail).toBe(detail);
  });

  test.each([
    ["on an unlimited key, without remaining", {}, { credits: { refill: { interval: "daily", amount: 5 } } }],
    ["with remaining: null", { credits: { remaining: 4 } }, { credits: { remaining: null, refill: { interval: "daily", amount: 5 } } }],
  ])("a refill %s: the key would stay unlimited until a refill limited it; nothing changes", async (_name, created, body) => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, name: "kept", ...created });
    const before = (await getKey(h, keyId)).credits;
    const res = await update({ keyId, name: "changed", ...body });
    expectInvalid(h, res, "body.credits.remaining");
    expect(res.body.error.detail).toBe("`credits.remaining` must be provided when `credits.refill` is set.");
    const view = await getKey(h, keyId);
    expect({ name: view.name, credits: view.credits }).toEqual({ name: "kept", credits: before });
    expect((await verify(h, key)).code).toBe("VALID");
  });

  test.each([
    ["an empty name", { name: "" }, "body.name"],
    ["an externalId with spaces", { externalId: "a b" }, "body.externalId"],
    ["negative expires", { expires: -1 }, "body.expires"],
    ["a refill interval that does not exist", { credits: { refill: { interval: "weekly", amount: 1 } } }, "body.credits"],
    ["ratelimits: null", { ratelimits: null }, "body.ratelimits"],
    ["enabled as a string", { enabled: "false" }, "body.enabled"],
    ["a permission with spaces", { permissions: ["a b"] }, "body.permissions[0]"],
    ["an unknown field", { plan: "pro" }, "body.plan"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await update({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without update_key on the key's API", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("api.*.update_key", { keyId, name: "x" }, h.apiId);
    const otherApi = await createApi(h, "update-other");
    expectError(h, await update({ keyId, name: "x" }, await h.rootKeyWith([`api.${otherApi}.update_key`])), 403, INSUFFICIENT);
    expect((await getKey(h, keyId)).name).toBeUndefined();
  });
});

describe("404", () => {
  test("an unknown key", async () => {
    expectError(h, await update({ keyId: "key_unknown", name: "x" }), 404, KEY_NOT_FOUND, "We could not find the requested key.");
  });

  test("a deleted key", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.post("/v2/keys.deleteKey", { keyId });
    expectError(h, await update({ keyId, name: "x" }), 404, KEY_NOT_FOUND, "We could not find the requested key.");
  });

  test("a key of another workspace: the unknown key's answer", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId, name: "x" }, KEY_NOT_FOUND, "We could not find the requested key.");
  });

  test("an unknown role: 404 and nothing changes", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, roles: ["viewer"] });
    const res = await update({ keyId, name: "changed", roles: ["editor", "ghost"] });
    expectError(h, res, 404, "service/data/role_not_found", "Role 'ghost' was not found.");
    const view = await getKey(h, keyId);
    expect({ name: view.name, roles: view.roles }).toEqual({ name: undefined, roles: ["viewer"] });
    expect((await verify(h, key)).roles).toEqual(["viewer"]);
    expect(await auditRows(h, "key.update", keyId)).toHaveLength(0);
  });
});
