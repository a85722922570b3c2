import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { embeddedOnly } from "../../../support/cluster-backend.ts";
import { allGrantsExcept, expectError, expectInvalid, INSUFFICIENT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows } from "../../../support/key-management.ts";
import { countRows, createPermission, createRole, REQUEST_ID, ROLE_DUPLICATE, simulateConcurrentInsert } from "./support.ts";

const h = routeContract("/v2/permissions.createRole");

const create = h.call;
const getRole = (role: string) => h.post("/v2/permissions.getRole", { role });
const slugsOf = (res: { body: { data: { permissions?: Array<{ slug: string }> } } }) => (res.body.data.permissions ?? []).map((p) => p.slug).sort();

describe("200", () => {
  test("returns exactly {roleId}; a role without permissions has none", async () => {
    const res = await create({ name: "Billing.Manager", description: "Manages billing" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: { roleId: expect.stringMatching(/^role_[a-zA-Z0-9]+$/) } });
    const got = await getRole(res.body.data.roleId);
    expect(got.body.data).toEqual({ id: res.body.data.roleId, name: "Billing.Manager", description: "Manages billing" });
  });

  test("any name it accepts can be assigned to a key by that name (up to 100 of letters, digits and _ : - . *)", async () => {
    const name = `Aa0_:-.*${"r".repeat(92)}`;
    expect((await create({ name, permissions: ["assignable.perm"] })).status).toBe(200);
    const apiId = (await h.post("/v2/apis.createApi", { name: "role-names" })).body.data.apiId;
    const created = await h.post("/v2/keys.createKey", { apiId, roles: [name] });
    expect(created.status).toBe(200);
    const verified = await h.post("/v2/keys.verifyKey", { key: created.body.data.key, permissions: "assignable.perm" });
    expect(verified.body.data).toMatchObject({ valid: true, roles: [name] });
  });

  test("existing permissions are reused and missing ones created", async () => {
    const existing = await createPermission(h, "orders.read", { name: "Read orders" });
    const before = await countRows(h, "permissions");
    const roleId = await createRole(h, "orders.manager", ["orders.read", "orders.write", "orders.write"]);
    expect(await countRows(h, "permissions")).toBe(before + 1);
    const got = await getRole(roleId);
    expect(slugsOf(got)).toEqual(["orders.read", "orders.write"]);
    expect(got.body.data.permissions.find((p: { slug: string }) => p.slug === "orders.read").id).toBe(existing);
  });

  test("`create_role` + `add_permission_to_role` suffice when every permission exists", async () => {
    await createPermission(h, "exists.already");
    const key = await h.rootKeyWith(["rbac.*.create_role", "rbac.*.add_permission_to_role"]);
    expect((await create({ name: "no-create-needed", permissions: ["exists.already"] }, key)).status).toBe(200);
  });

  test("`create_role` alone suffices for an empty permissions list", async () => {
    expect((await create({ name: "empty-list", permissions: [] }, await h.rootKeyWith(["rbac.*.create_role"]))).status).toBe(200);
  });

  test("writes one `role.create` audit entry naming the role and its permissions", async () => {
    const roleId = await createRole(h, "audited-role", ["audit.perm"]);
    const rows = await auditRows(h, "role.create", roleId);
    expect(rows.length).toBe(1);
    const permId = (await h.post("/v2/permissions.getPermission", { permission: "audit.perm" })).body.data.id;
    expect(rows[0]?.resources).toEqual([
      { type: "role", id: roleId, name: "audited-role" },
      { type: "permission", id: permId, name: "audit.perm" },
    ]);
  });

  test("the same name in another workspace is no conflict", async () => {
    await createRole(h, "shared-role");
    expect((await create({ name: "shared-role" }, await otherWorkspaceRootKey(h, "cr-other"))).status).toBe(200);
  });
});

describe("400", () => {
  test("name missing", async () => {
    expectInvalid(h, await create({}), "body.name");
  });

  test("empty name", async () => {
    expectInvalid(h, await create({ name: "" }), "body.name");
  });

  test("name longer than 100 (the longest role name a key can name)", async () => {
    expect((await create({ name: "r".repeat(100) })).status).toBe(200);
    expectInvalid(h, await create({ name: "s".repeat(101) }), "body.name");
  });

  test("a name keys could not name: a space, or a character outside letters, digits and _ : - . *; nothing is stored", async () => {
    const before = await countRows(h, "roles");
    for (const name of ["Billing Manager", "ops/admin", "über"]) expectInvalid(h, await create({ name }), "body.name");
    expect(await countRows(h, "roles")).toBe(before);
  });

  test("description longer than 512", async () => {
    expectInvalid(h, await create({ name: "x", description: "d".repeat(513) }), "body.description");
  });

  test("a permission slug with a space", async () => {
    expectInvalid(h, await create({ name: "x", permissions: ["ok", "not ok"] }), "body.permissions[1]");
  });

  test("permissions not an array", async () => {
    expectInvalid(h, await create({ name: "x", permissions: "a.b" }), "body.permissions");
  });

  test("unknown field", async () => {
    expectInvalid(h, await create({ name: "x", roles: [] }), "body.roles");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await create({ name: "x" }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without create_role; the detail names it", async () => {
    await h.expectDeniedWithout("rbac.*.create_role", { name: "denied" });
  });

  test("with permissions but without add_permission_to_role", async () => {
    await createPermission(h, "p.exists");
    await h.expectDeniedWithout("rbac.*.add_permission_to_role", { name: "denied2", permissions: ["p.exists"] });
  });

  test("a missing permission without create_permission: 403 and nothing is stored", async () => {
    await createPermission(h, "p.there");
    const key = await h.rootKeyWith(allGrantsExcept("rbac.*.create_permission"));
    const before = { roles: await countRows(h, "roles"), permissions: await countRows(h, "permissions"), audit: await countRows(h, "audit_logs") };
    const res = await create({ name: "denied3", permissions: ["p.there", "p.not.there"] }, key);
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'rbac.*.create_permission'");
    expect({ roles: await countRows(h, "roles"), permissions: await countRows(h, "permissions"), audit: await countRows(h, "audit_logs") }).toEqual(before);
  });
});

describe("409", () => {
  test("a duplicate name, compared case-insensitively", async () => {
    await createRole(h, "Support.Readonly");
    const res = await create({ name: "support.READONLY" });
    expectError(h, res, 409, ROLE_DUPLICATE, "A role with name 'support.READONLY' already exists in this workspace.");
    expect(res.body.error.title).toBe("Conflict");
  });

  test("a retry stores nothing more, not even its new permissions", async () => {
    expect((await create({ name: "retried", permissions: ["r.one"] })).status).toBe(200);
    const before = { roles: await countRows(h, "roles"), permissions: await countRows(h, "permissions") };
    expectError(h, await create({ name: "retried", permissions: ["r.one", "r.two"] }), 409, ROLE_DUPLICATE);
    expect({ roles: await countRows(h, "roles"), permissions: await countRows(h, "permissions") }).toEqual(before);
  });

  embeddedOnly("a SQLite trigger plays the concurrent writer")("a duplicate only the unique index sees (a concurrent create) is still 409, never 500", async () => {
    const cleanup = simulateConcurrentInsert(h, "roles", "raced-role");
    try {
      expectError(h, await create({ name: "raced-role" }), 409, ROLE_DUPLICATE, "A role with name 'raced-role' already exists in this workspace.");
    } finally {
      cleanup();
    }
  });
});
