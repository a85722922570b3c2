import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createKey, expectError, expectInvalid, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, countRows, createPermission, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.setPermissions", { api: "set-permissions" });

const set = h.call;
const slugs = (data: Array<{ slug: string }>) => data.map((p) => p.slug);

describe("200", () => {
  test("replaces the direct permissions (missing ones created); the very next verification sees the new set", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, permissions: ["s.old", "s.kept"] });
    expect((await verify(h, key, { permissions: "s.old" })).code).toBe("VALID");
    const res = await set({ keyId, permissions: ["s.kept", "s.new"] });
    expect(res.status).toBe(200);
    expect(slugs(res.body.data)).toEqual(["s.kept", "s.new"]);
    expect(res.body.data[1]).toEqual({ id: expect.stringMatching(/^perm_/), name: "s.new", slug: "s.new", description: "Auto-created permission: s.new" });
    expect((await verify(h, key, { permissions: "s.old" })).code).toBe("INSUFFICIENT_PERMISSIONS");
    expect((await verify(h, key, { permissions: "s.kept AND s.new" })).code).toBe("VALID");
  });

  test("[] removes every direct permission", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, permissions: ["c.one", "c.two"] });
    expect((await verify(h, key)).permissions).toEqual(["c.one", "c.two"]);
    const res = await set({ keyId, permissions: [] });
    expect(res.body.data).toEqual([]);
    expect((await verify(h, key)).permissions).toBeUndefined();
  });

  test("existing permissions need no create_permission", async () => {
    await createPermission(h, "set.existing");
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const rootKey = await h.rootKeyWith(["api.*.update_key", "rbac.*.add_permission_to_key", "rbac.*.remove_permission_from_key"]);
    expect((await set({ keyId, permissions: ["set.existing"] }, rootKey)).status).toBe(200);
  });

  test("writes one key.set_permissions audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await set({ keyId, permissions: ["aud.x"] });
    expect(await auditRows(h, "key.set_permissions", keyId)).toHaveLength(1);
  });
});

describe("400", () => {
  test.each([
    ["no permissions", {}, "body.permissions"],
    ["permissions: null", { permissions: null }, "body.permissions"],
    ["a slug with spaces", { permissions: ["a b"] }, "body.permissions[0]"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await set({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test.each(["rbac.*.add_permission_to_key", "rbac.*.remove_permission_from_key"])("without %s", async (missing) => {
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["before"] });
    await h.expectDeniedWithout(missing, { keyId, permissions: [] });
    expect((await getKey(h, keyId)).permissions).toEqual(["before"]);
  });

  test("a new slug without rbac.*.create_permission: nothing changes", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["before"] });
    await h.expectDeniedWithout("rbac.*.create_permission", { keyId, permissions: ["never.made"] });
    expect(await countRows(h, "permissions", "slug", "never.made")).toBe(0);
    expect((await getKey(h, keyId)).permissions).toEqual(["before"]);
  });
});

describe("404", () => {
  test("an unknown key", async () => {
    expectError(h, await set({ keyId: "key_unknown", permissions: [] }), 404, KEY_NOT_FOUND, "The specified key was not found.");
  });

  test("a key of another workspace", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId, permissions: [] }, KEY_NOT_FOUND);
  });
});
