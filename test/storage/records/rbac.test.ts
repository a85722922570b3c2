/**
 * The records of permissions, roles and their links on both backends: the same answers for the
 * same writes and queries, names and slugs folded as SQLite's lower() folds them (ASCII letters only),
 * ids in byte order.
 */
import { expect, test } from "bun:test";
import { DuplicateRecord, type PermissionRow, type Records, type RoleRow } from "../../../src/storage/records/index.ts";
import { ROLE_PERMISSION_OVERHEAD_BYTES } from "../../../src/storage/records/rbac.ts";
import { step, type Work } from "../../../src/storage/work.ts";
import { eachBackend, type TestBackend } from "./backends.ts";

const permission = (id: string, name: string, slug: string, workspaceId = "ws_1"): PermissionRow =>
  ({ id, workspaceId, name, slug, description: null, createdAt: 1 });
const role = (id: string, name: string, workspaceId = "ws_1"): RoleRow => ({ id, workspaceId, name, description: null, createdAt: 1 });

/** Each write in a unit of its own, so that one refused leaves the others in place. */
async function insert(b: TestBackend, rows: { permissions?: PermissionRow[]; roles?: RoleRow[] }): Promise<void> {
  for (const row of rows.permissions ?? []) await b.records.write(row.workspaceId, function* (r) { yield r.rbac.insertPermission(row); });
  for (const row of rows.roles ?? []) await b.records.write(row.workspaceId, function* (r) { yield r.rbac.insertRole(row); });
}

/** What a write throws (the embedded backend at once, the cluster one by rejecting), or undefined. */
async function refusal(write: () => unknown): Promise<unknown> {
  try {
    await write();
    return undefined;
  } catch (error) {
    return error;
  }
}

const read = <T>(b: TestBackend, unit: (r: Records) => Work<T>) => b.records.read(unit);

eachBackend((open) => {
  test("a permission is found by id before slug, by slug or name ignoring ASCII case only, in its own workspace", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    await insert(b, {
      permissions: [
        permission("perm_c", "Shadow", "perm_a"), permission("perm_a", "Read Docs", "docs.read"),
        permission("perm_b", "Éclair", "éclair.eat"), permission("perm_x", "Read Docs", "docs.read", "ws_2"),
      ],
    });
    const found = (ws: string, idOrSlug: string) => read(b, (r) => step(r.rbac.findPermission(ws, idOrSlug)));
    expect(await found("ws_1", "perm_a")).toEqual({ id: "perm_a", name: "Read Docs", slug: "docs.read", description: null });
    expect((await found("ws_1", "DOCS.Read"))?.id).toBe("perm_a");
    expect((await found("ws_1", "PERM_A"))?.id).toBe("perm_c");
    expect((await found("ws_1", "éclair.eat"))?.id).toBe("perm_b");
    expect(await found("ws_1", "ÉCLAIR.EAT")).toBeUndefined();
    expect(await found("ws_2", "perm_a")).toBeUndefined();
    expect((await found("ws_2", "docs.read"))?.id).toBe("perm_x");

    const idBySlug = (ws: string, slug: string) => read(b, (r) => step(r.rbac.permissionIdBySlug(ws, slug)));
    expect(await idBySlug("ws_1", "Docs.READ")).toBe("perm_a");
    expect(await idBySlug("ws_1", "Éclair.eat")).toBeUndefined();
    expect(await idBySlug("ws_1", "perm_b")).toBeUndefined();

    const named = (name: string) => read(b, (r) => step(r.rbac.permissionNamed("ws_1", name)));
    expect(await named("READ docs")).toEqual({ name: "Read Docs", slug: "docs.read" });
    expect(await named("éclair")).toBeUndefined();
    expect(await named("Éclair")).toEqual({ name: "Éclair", slug: "éclair.eat" });
  });

  test("a permission's name or slug taken ignoring ASCII case is DuplicateRecord; other letters in another case are new", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    await insert(b, { permissions: [permission("perm_a", "Shop", "shop.read"), permission("perm_b", "Éclair", "éclair.eat")] });
    const tryInsert = (row: PermissionRow) => refusal(() => b.records.write(row.workspaceId, function* (r) { yield r.rbac.insertPermission(row); }));
    expect(await tryInsert(permission("perm_c", "SHOP", "other"))).toBeInstanceOf(DuplicateRecord);
    expect(await tryInsert(permission("perm_d", "other", "SHOP.read"))).toBeInstanceOf(DuplicateRecord);
    expect(await tryInsert(permission("perm_e", "éclair", "Éclair.eat"))).toBeUndefined();
    expect(await tryInsert(permission("perm_f", "Shop", "shop.read", "ws_2"))).toBeUndefined();
    const ids = await read(b, (r) => step(r.rbac.listPermissions({ workspaceId: "ws_1", limit: 10 })));
    expect(ids.map((p) => p.id)).toEqual(["perm_a", "perm_b", "perm_e"]);
  });

  test("a role is found by id before name, by name ignoring ASCII case only; a name taken so is DuplicateRecord", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    await insert(b, { roles: [role("role_b", "role_a"), role("role_a", "Admin"), role("role_c", "Éclair"), role("role_x", "Admin", "ws_2")] });
    const tryInsert = (row: RoleRow) => refusal(() => b.records.write(row.workspaceId, function* (r) { yield r.rbac.insertRole(row); }));
    expect(await tryInsert(role("role_d", "ADMIN"))).toBeInstanceOf(DuplicateRecord);
    expect(await tryInsert(role("role_e", "éclair"))).toBeUndefined();

    const found = (ws: string, idOrName: string) => read(b, (r) => step(r.rbac.findRole(ws, idOrName)));
    expect(await found("ws_1", "role_a")).toEqual({ id: "role_a", name: "Admin", description: null });
    expect((await found("ws_1", "ROLE_A"))?.id).toBe("role_b");
    expect((await found("ws_1", "admin"))?.id).toBe("role_a");
    expect((await found("ws_1", "ÉCLAIR"))?.id).toBe("role_c");
    expect(await found("ws_2", "role_a")).toBeUndefined();

    const named = (lowerNames: string[]) => read(b, (r) => step(r.rbac.rolesNamed("ws_1", lowerNames)));
    expect((await named(["admin", "éclair", "nobody"])).sort((x, y) => (x.id < y.id ? -1 : 1)))
      .toEqual([{ id: "role_a", name: "Admin" }, { id: "role_e", name: "éclair" }]);
    expect(await named([])).toEqual([]);

    await b.records.write("ws_1", function* (r) { yield r.rbac.markRoleUpdated("role_a", 50); });
    expect(await found("ws_1", "role_a")).toEqual({ id: "role_a", name: "Admin", description: null });
  });

  test("lists by id in byte order from the cursor, searching substrings with ASCII-only folding, % and _ literal", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.workspace("ws_2");
    const ids = ["perm_b", "perm_B", "perm_a", "perm_é", "perm_d"];
    const names = ["Shop", "shop-éclair", "SHOP.admin", "Éclair", "50%_off"];
    await insert(b, {
      permissions: [
        ...ids.map((id, i) => ({ ...permission(id, names[i]!, `slug.${i}`), description: i === 0 ? "Sells ÉCLAIRS" : null })),
        permission("perm_other", "shop", "shop", "ws_2"),
      ],
      roles: [...ids.map((id, i) => role(id.replace("perm", "role"), names[i]!)), role("role_other", "shop", "ws_2")],
    });
    const permissions = async (query: { cursor?: string; search?: string; limit?: number }) =>
      (await read(b, (r) => step(r.rbac.listPermissions({ workspaceId: "ws_1", limit: 10, ...query })))).map((p) => p.id);
    expect(await permissions({})).toEqual(["perm_B", "perm_a", "perm_b", "perm_d", "perm_é"]);
    expect(await permissions({ cursor: "perm_C" })).toEqual(["perm_a", "perm_b", "perm_d", "perm_é"]);
    expect(await permissions({ cursor: "perm_e" })).toEqual(["perm_é"]);
    expect(await permissions({ limit: 2 })).toEqual(["perm_B", "perm_a"]);
    expect(await permissions({ search: "SHOP" })).toEqual(["perm_B", "perm_a", "perm_b"]);
    expect(await permissions({ search: "éclair" })).toEqual(["perm_B"]);
    expect(await permissions({ search: "ÉCLAIR" })).toEqual(["perm_b", "perm_é"]);
    expect(await permissions({ search: "%_" })).toEqual(["perm_d"]);
    expect(await permissions({ search: "_" })).toEqual(["perm_B", "perm_a", "perm_b", "perm_d", "perm_é"]);
    expect(await permissions({ search: "SLUG.3" })).toEqual(["perm_é"]);

    const roles = async (query: { cursor?: string; search?: string; limit?: number }) =>
      (await read(b, (r) => step(r.rbac.listRoles({ workspaceId: "ws_1", limit: 10, ...query })))).map((p) => p.id);
    expect(await roles({})).toEqual(["role_B", "role_a", "role_b", "role_d", "role_é"]);
    expect(await roles({ cursor: "role_C", limit: 2 })).toEqual(["role_a", "role_b"]);
    expect(await roles({ search: "ÉCLAIR" })).toEqual(["role_é"]);
    expect(await roles({ search: "Shop" })).toEqual(["role_B", "role_a", "role_b"]);
    expect(await roles({ search: "ROLE_D" })).toEqual(["role_d"]);
  });

  test("listRoleSizes answers listRoles' ids with their permissions' bytes; until bounds both by id in byte order", async () => {
    const b = await open();
    await b.workspace("ws_1");
    const described = { ...permission("perm_x", "Ünïcode ✓", "x.read"), description: "d".repeat(600) };
    await insert(b, { permissions: [described, permission("perm_y", "y", "y.read")], roles: [role("role_b", "b"), role("role_a", "a"), role("role_c", "c")] });
    await b.records.write("ws_1", function* (r) {
      yield r.rbac.setRolePermissions("ws_1", "role_a", ["perm_x", "perm_y"], 2);
      yield r.rbac.setRolePermissions("ws_1", "role_c", ["perm_y"], 2);
    });
    const bytes = (p: PermissionRow) =>
      Buffer.byteLength(p.id) + Buffer.byteLength(p.name) + Buffer.byteLength(p.slug) + Buffer.byteLength(p.description ?? "") + ROLE_PERMISSION_OVERHEAD_BYTES;
    const y = bytes(permission("perm_y", "y", "y.read"));
    const sizes = (query: { cursor?: string; until?: string; search?: string }) =>
      read(b, (r) => step(r.rbac.listRoleSizes({ workspaceId: "ws_1", limit: 10, ...query })));
    expect(await sizes({})).toEqual([{ id: "role_a", bytes: bytes(described) + y }, { id: "role_b", bytes: 0 }, { id: "role_c", bytes: y }]);
    expect(await sizes({ cursor: "role_b", until: "role_b" })).toEqual([{ id: "role_b", bytes: 0 }]);
    const ids = async (query: { cursor?: string; until?: string }) =>
      (await read(b, (r) => step(r.rbac.listRoles({ workspaceId: "ws_1", limit: 10, ...query })))).map((row) => row.id);
    expect(await ids({ until: "role_b" })).toEqual(["role_a", "role_b"]);
  });

  test("links of roles and keys are replaced whole, read back by byte order of permission id, and go with what they link", async () => {
    const b = await open();
    await b.workspace("ws_1");
    await b.records.write("ws_1", function* (r) {
      yield r.apis.create({ id: "api_1", keySpaceId: "ks_1", workspaceId: "ws_1", name: "shop", createdAt: 1 });
    });
    await b.key({ id: "key_1", workspaceId: "ws_1", keySpaceId: "ks_1" });
    await insert(b, {
      permissions: [permission("perm_b", "B", "b.read"), permission("perm_B", "Big B", "B.write"), permission("perm_a", "A", "a.read")],
      roles: [role("role_1", "reader"), role("role_2", "writer")],
    });
    await b.records.write("ws_1", function* (r) {
      yield r.rbac.setRolePermissions("ws_1", "role_1", ["perm_b", "perm_a", "perm_B"], 5);
      yield r.rbac.setRolePermissions("ws_1", "role_2", ["perm_b"], 5);
      yield r.rbac.setKeyRoles("ws_1", "key_1", ["role_2", "role_1"], 5);
      yield r.rbac.setKeyPermissions("ws_1", "key_1", ["perm_a"], 5);
    });
    const view = (id: string, name: string, slug: string, roleId: string) => ({ roleId, id, name, slug, description: null });
    expect(await read(b, (r) => step(r.rbac.rolePermissions(["role_1"])))).toEqual([
      view("perm_B", "Big B", "B.write", "role_1"), view("perm_a", "A", "a.read", "role_1"), view("perm_b", "B", "b.read", "role_1"),
    ]);
    const both = await read(b, (r) => step(r.rbac.rolePermissions(["role_1", "role_2"])));
    expect(both.map((p) => p.id)).toEqual(["perm_B", "perm_a", "perm_b", "perm_b"]);
    expect(both.filter((p) => p.roleId === "role_2")).toEqual([view("perm_b", "B", "b.read", "role_2")]);
    expect(await read(b, (r) => step(r.rbac.rolePermissions([])))).toEqual([]);
    expect((await read(b, (r) => step(r.rbac.rolePermissionSlugs(["role_1", "role_2"])))).sort()).toEqual(["B.write", "a.read", "b.read", "b.read"]);
    expect(await read(b, (r) => step(r.rbac.rolePermissionSlugs([])))).toEqual([]);
    expect((await read(b, (r) => step(r.rbac.keyRoles("key_1")))).sort((x, y) => (x.id < y.id ? -1 : 1)))
      .toEqual([{ id: "role_1", name: "reader" }, { id: "role_2", name: "writer" }]);
    expect(await read(b, (r) => step(r.rbac.keyPermissionSlugs("key_1")))).toEqual(["a.read"]);

    await b.records.write("ws_1", function* (r) {
      yield r.rbac.setRolePermissions("ws_1", "role_1", ["perm_a"], 6);
      yield r.rbac.setKeyRoles("ws_1", "key_1", ["role_1"], 6);
      yield r.rbac.setKeyPermissions("ws_1", "key_1", [], 6);
    });
    expect((await read(b, (r) => step(r.rbac.rolePermissions(["role_1"])))).map((p) => p.id)).toEqual(["perm_a"]);
    expect(await read(b, (r) => step(r.rbac.keyRoles("key_1")))).toEqual([{ id: "role_1", name: "reader" }]);
    expect(await read(b, (r) => step(r.rbac.keyPermissionSlugs("key_1")))).toEqual([]);

    await b.records.write("ws_1", function* (r) {
      yield r.rbac.setKeyPermissions("ws_1", "key_1", ["perm_a"], 7);
      yield r.rbac.deletePermission("perm_a");
    });
    expect(await read(b, (r) => step(r.rbac.findPermission("ws_1", "perm_a")))).toBeUndefined();
    expect(await read(b, (r) => step(r.rbac.rolePermissions(["role_1"])))).toEqual([]);
    expect(await read(b, (r) => step(r.rbac.keyPermissionSlugs("key_1")))).toEqual([]);
    await b.records.write("ws_1", function* (r) { yield r.rbac.deleteRole("role_1"); });
    expect(await read(b, (r) => step(r.rbac.findRole("ws_1", "role_1")))).toBeUndefined();
    expect(await read(b, (r) => step(r.rbac.keyRoles("key_1")))).toEqual([]);
  });

  test("a unit that throws after its writes leaves none of them", async () => {
    const b = await open();
    await b.workspace("ws_1");
    const failing = async () => b.records.write("ws_1", function* (r) {
      yield r.rbac.insertRole(role("role_1", "reader"));
      yield r.rbac.insertPermission(permission("perm_1", "p", "p"));
      yield r.rbac.setRolePermissions("ws_1", "role_1", ["perm_1"], 2);
      throw new Error("after the writes");
    });
    await expect(failing()).rejects.toThrow("after the writes");
    expect(await read(b, (r) => step(r.rbac.listRoles({ workspaceId: "ws_1", limit: 10 })))).toEqual([]);
    expect(await read(b, (r) => step(r.rbac.listPermissions({ workspaceId: "ws_1", limit: 10 })))).toEqual([]);
  });
});
