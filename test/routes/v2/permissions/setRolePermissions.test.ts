import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createApi, createKey, expectError, expectInvalid, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows } from "../../../support/key-management.ts";
import { countRows, createPermission, createRole, REQUEST_ID, ROLE_NOT_FOUND } from "./support.ts";

const h = routeContract("/v2/permissions.setRolePermissions");

const set = h.call;
const slugs = (data: Array<{ slug: string }>) => data.map((p) => p.slug).sort();
const roleSlugs = async (role: string) => slugs((await h.post("/v2/permissions.getRole", { role })).body.data.permissions ?? []);

describe("200", () => {
  test("replaces the role's permissions (missing ones created) and answers them as Permission records", async () => {
    const kept = await createPermission(h, "set.kept", { description: "Kept" });
    const roleId = await createRole(h, "set-replace", ["set.kept", "set.dropped"]);
    const res = await set({ roleId, permissions: ["set.kept", "set.new"] });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ requestId: REQUEST_ID });
    const fresh = res.body.data.find((p: { slug: string }) => p.slug === "set.new");
    expect(res.body.data).toEqual(expect.arrayContaining([
      { id: kept, name: "set.kept", slug: "set.kept", description: "Kept" },
      { id: expect.stringMatching(/^perm_/), name: "set.new", slug: "set.new", description: "Auto-created permission: set.new" },
    ]));
    expect(res.body.data).toHaveLength(2);
    expect(fresh.id).not.toBe(kept);
    expect(await roleSlugs(roleId)).toEqual(["set.kept", "set.new"]);
    expect((await h.post("/v2/permissions.getPermission", { permission: "set.dropped" })).status).toBe(200);
  });

  test("[] removes every permission; the role is addressed by name too, ignoring case", async () => {
    await createRole(h, "set-clear", ["clear.a", "clear.b"]);
    const res = await set({ roleId: "SET-CLEAR", permissions: [] });
    expect({ status: res.status, data: res.body.data }).toEqual({ status: 200, data: [] });
    expect(await roleSlugs("set-clear")).toEqual([]);
  });

  test("keys holding the role see the new set at their very next verification, even after a cached one", async () => {
    const apiId = await createApi(h, "set-role-verify");
    await createRole(h, "set-live", ["live.old"]);
    const { key } = await createKey(h, { apiId, roles: ["set-live"] });
    const verify = async (query: string) => (await h.post("/v2/keys.verifyKey", { key, permissions: query })).body.data;
    expect(await verify("live.old")).toMatchObject({ code: "VALID", permissions: ["live.old"] });
    expect((await set({ roleId: "set-live", permissions: ["live.new"] })).status).toBe(200);
    expect(await verify("live.new")).toMatchObject({ code: "VALID", permissions: ["live.new"] });
    expect((await verify("live.old")).code).toBe("INSUFFICIENT_PERMISSIONS");
  });

  test("existing permissions need no create_permission", async () => {
    await createPermission(h, "set.exists");
    const roleId = await createRole(h, "set-no-create");
    const key = await h.rootKeyWith(["rbac.*.add_permission_to_role", "rbac.*.remove_permission_from_role"]);
    expect((await set({ roleId, permissions: ["set.exists"] }, key)).status).toBe(200);
  });

  test("writes one `role.set_permissions` audit entry naming the role and its permissions", async () => {
    const roleId = await createRole(h, "set-audited");
    const res = await set({ roleId, permissions: ["audit.set"] });
    const rows = await auditRows(h, "role.set_permissions", roleId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.resources).toEqual([
      { type: "role", id: roleId, name: "set-audited" },
      { type: "permission", id: res.body.data[0].id, name: "audit.set" },
    ]);
  });
});

describe("400", () => {
  test.each([
    ["role missing", { permissions: [] }, "body.role"],
    ["permissions missing", { roleId: "role_x" }, "body.permissions"],
    ["a slug with a space", { roleId: "role_x", permissions: ["ok", "not ok"] }, "body.permissions[1]"],
    ["more than 1000 permissions", { roleId: "role_x", permissions: Array.from({ length: 1001 }, (_, i) => `p.${i}`) }, "body.permissions"],
    ["an unknown field", { roleId: "role_x", permissions: [], description: "x" }, "body.description"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await set(body), location);
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await set({ roleId: "role_x", permissions: [] }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test.each(["rbac.*.add_permission_to_role", "rbac.*.remove_permission_from_role"])("without %s; nothing changes", async (missing) => {
    const roleId = await createRole(h, `set-denied-${missing.split(".")[2]}`, ["denied.kept"]);
    await h.expectDeniedWithout(missing, { roleId, permissions: [] });
    expect(await roleSlugs(roleId)).toEqual(["denied.kept"]);
  });

  test("a new slug without create_permission: 403 and nothing is created or changed", async () => {
    const roleId = await createRole(h, "set-no-create-perm", ["nc.kept"]);
    const before = await countRows(h, "permissions");
    await h.expectDeniedWithout("rbac.*.create_permission", { roleId, permissions: ["nc.brand.new"] });
    expect(await countRows(h, "permissions")).toBe(before);
    expect(await roleSlugs(roleId)).toEqual(["nc.kept"]);
  });
});

describe("404", () => {
  test("an unknown role", async () => {
    expectError(h, await set({ roleId: "role_unknown", permissions: [] }), 404, ROLE_NOT_FOUND, "The requested role does not exist.");
  });

  test("a role of another workspace stays untouched", async () => {
    const roleId = await createRole(h, "set-foreign", ["foreign.kept"]);
    await h.expectHiddenFromOtherWorkspace({ roleId, permissions: [] }, ROLE_NOT_FOUND);
    expect(await roleSlugs(roleId)).toEqual(["foreign.kept"]);
  });
});

describe("the role's field: `role` as in getRole and deleteRole, `roleId` still accepted", () => {
  test("200: `role` names the role by id or name, like `roleId`", async () => {
    const roleId = await createRole(h, "set-by-role", ["by.role.a"]);
    const byId = await set({ role: roleId, permissions: ["by.role.b"] });
    expect({ status: byId.status, slugs: slugs(byId.body.data) }).toEqual({ status: 200, slugs: ["by.role.b"] });
    const byName = await set({ role: "set-by-role", permissions: ["by.role.c"] });
    expect({ status: byName.status, slugs: slugs(byName.body.data) }).toEqual({ status: 200, slugs: ["by.role.c"] });
    expect(await roleSlugs(roleId)).toEqual(["by.role.c"]);
  });

  test("400: neither or both spellings, and nothing changed", async () => {
    const roleId = await createRole(h, "set-both", ["both.kept"]);
    for (const body of [{ permissions: ["both.new"] }, { role: roleId, roleId, permissions: ["both.new"] }]) {
      const res = await set(body);
      expectError(h, res, 400, "service/application/invalid_input");
      expect(res.body.error.errors[0].location).toBe("body.role");
    }
    expect(await roleSlugs(roleId)).toEqual(["both.kept"]);
  });
});
