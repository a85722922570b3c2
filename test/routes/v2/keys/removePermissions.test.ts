import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { allGrantsExcept, createKey, expectError, expectInvalid, INSUFFICIENT, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, createPermission, createRole, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.removePermissions", {
  api: "remove-permissions",
  setup: (h) => createRole(h, "remove-perm-role", ["shared.perm"]),
});

const remove = h.call;
const slugs = (data: Array<{ slug: string }>) => data.map((p) => p.slug);

describe("200", () => {
  test("removes by slug and answers the rest; the very next verification no longer has it", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, permissions: ["r.one", "r.two"] });
    expect((await verify(h, key, { permissions: "r.one" })).code).toBe("VALID");
    const res = await remove({ keyId, permissions: ["r.one"] });
    expect(res.status).toBe(200);
    expect(slugs(res.body.data)).toEqual(["r.two"]);
    expect((await verify(h, key, { permissions: "r.one" })).code).toBe("INSUFFICIENT_PERMISSIONS");
  });

  test("removes by permission id", async () => {
    const id = await createPermission(h, "by.id", "described");
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["by.id", "stays"] });
    const res = await remove({ keyId, permissions: [id] });
    expect(slugs(res.body.data)).toEqual(["stays"]);
  });

  test("a permission that exists but is not assigned: 200, nothing changes", async () => {
    await createPermission(h, "not.assigned");
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["kept"] });
    const res = await remove({ keyId, permissions: ["not.assigned"] });
    expect(res.status).toBe(200);
    expect(slugs(res.body.data)).toEqual(["kept"]);
  });

  test("permissions held through a role stay", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, permissions: ["shared.perm"], roles: ["remove-perm-role"] });
    expect((await verify(h, key)).permissions).toEqual(["shared.perm"]);
    expect((await remove({ keyId, permissions: ["shared.perm"] })).body.data).toEqual([]);
    expect((await verify(h, key, { permissions: "shared.perm" })).code).toBe("VALID");
  });

  test("writes one key.remove_permissions audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["gone"] });
    await remove({ keyId, permissions: ["gone"] });
    expect(await auditRows(h, "key.remove_permissions", keyId)).toHaveLength(1);
  });
});

describe("400", () => {
  test.each([
    ["an empty list", { permissions: [] }, "body.permissions"],
    ["a slug with spaces", { permissions: ["a b"] }, "body.permissions[0]"],
    ["no keyId", { keyId: undefined, permissions: ["a"] }, "body.keyId"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await remove({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without rbac.*.remove_permission_from_key; the permission stays", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, permissions: ["guarded"] });
    await h.expectDeniedWithout("rbac.*.remove_permission_from_key", { keyId, permissions: ["guarded"] });
    expect((await verify(h, key)).permissions).toEqual(["guarded"]);
  });

  test("without update_key", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["guarded"] });
    const res = await remove({ keyId, permissions: ["guarded"] }, await h.rootKeyWith(allGrantsExcept("api.*.update_key")));
    expectError(h, res, 403, INSUFFICIENT);
  });
});

describe("404", () => {
  test("a permission that does not exist: 404 and nothing is removed", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["real"] });
    const res = await remove({ keyId, permissions: ["real", "ghost.perm"] });
    expectError(h, res, 404, "service/data/permission_not_found", "Permission 'ghost.perm' was not found.");
    expect((await getKey(h, keyId)).permissions).toEqual(["real"]);
  });

  test("an unknown key", async () => {
    expectError(h, await remove({ keyId: "key_unknown", permissions: ["a"] }), 404, KEY_NOT_FOUND, "The specified key was not found.");
  });

  test("a key of another workspace", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["a"] });
    await h.expectHiddenFromOtherWorkspace({ keyId, permissions: ["a"] }, KEY_NOT_FOUND, "The specified key was not found.");
  });
});
