/**
 * How every route that names permissions (by slug) or roles (by name) resolves them: names that
 * differ only in case are one record, and a slug never resolves through another permission's name.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, expectError } from "../support/contract.ts";
import { createPermission, createRole, getKey, verify } from "../support/key-management.ts";

let h: Harness;
let apiId: string;
beforeAll(async () => {
  h = await startHarness();
  apiId = await createApi(h, "names");
  await createRole(h, "editor", ["docs.write"]);
  // A permission whose name is another permission's possible slug.
  await createPermission(h, "docs.read");
  const named = await h.post("/v2/permissions.createPermission", { name: "Read", slug: "documents.read" });
  expect(named.status).toBe(200);
});
afterAll(async () => { await h.stop(); });

const slugs = (data: Array<{ slug: string }>) => data.map((p) => p.slug);
const rows = (table: "permissions" | "roles" | "keys") => h.embedded.storage.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
const permissionRows = () => rows("permissions");

describe("names differing only in case are one record (never a 500)", () => {
  test("createKey and updateKey", async () => {
    const { keyId, key } = await createKey(h, { apiId, roles: ["editor", "EDITOR"], permissions: ["case.one", "CASE.ONE"] });
    let view = await getKey(h, keyId);
    expect({ roles: view.roles, permissions: view.permissions }).toEqual({ roles: ["editor"], permissions: ["case.one", "docs.write"] });
    const res = await h.post("/v2/keys.updateKey", { keyId, roles: ["Editor", "editor"], permissions: ["case.two", "Case.Two"] });
    expect(res.status).toBe(200);
    view = await getKey(h, keyId);
    expect({ roles: view.roles, permissions: view.permissions }).toEqual({ roles: ["editor"], permissions: ["case.two", "docs.write"] });
    expect(await verify(h, key, { permissions: "case.two AND docs.write" })).toMatchObject({ code: "VALID" });
  });

  test("setRoles, addRoles, setPermissions, addPermissions", async () => {
    const { keyId } = await createKey(h, { apiId });
    const set = await h.post("/v2/keys.setRoles", { keyId, roles: ["editor", "EDITOR"] });
    expect({ status: set.status, names: set.body.data.map((r: { name: string }) => r.name) }).toEqual({ status: 200, names: ["editor"] });
    expect((await h.post("/v2/keys.addRoles", { keyId, roles: ["EDITOR", "eDiToR"] })).body.data).toHaveLength(1);
    const perms = await h.post("/v2/keys.setPermissions", { keyId, permissions: ["case.three", "CASE.THREE"] });
    expect({ status: perms.status, slugs: slugs(perms.body.data) }).toEqual({ status: 200, slugs: ["case.three"] });
    const added = await h.post("/v2/keys.addPermissions", { keyId, permissions: ["case.four", "Case.Four", "case.three"] });
    expect({ status: added.status, slugs: slugs(added.body.data) }).toEqual({ status: 200, slugs: ["case.four", "case.three"] });
  });

  test("createRole", async () => {
    const before = permissionRows();
    const roleId = await createRole(h, "case-role", ["case.five", "CASE.FIVE", "docs.READ"]);
    expect(permissionRows()).toBe(before + 1);
    const role = (await h.post("/v2/permissions.getRole", { role: roleId })).body.data;
    expect(slugs(role.permissions).sort()).toEqual(["case.five", "docs.read"]);
  });

  test("a slug in another case reuses the stored permission instead of creating one", async () => {
    const before = permissionRows();
    const { keyId } = await createKey(h, { apiId, permissions: ["DOCS.READ"] });
    expect(permissionRows()).toBe(before);
    expect((await getKey(h, keyId)).permissions).toEqual(["docs.read"]);
  });
});

describe("409: a new slug whose name another permission already has", () => {
  const CONFLICT = "service/data/permission/duplicate";
  const DETAIL = "Permission 'read' cannot be created: the permission 'documents.read' is already named 'Read' in this workspace. Use its slug, or rename it.";

  test("createKey: no key, no permission", async () => {
    const before = { keys: rows("keys"), permissions: permissionRows() };
    const res = await h.post("/v2/keys.createKey", { apiId, permissions: ["read"] });
    expectError(h, res, 409, CONFLICT, DETAIL);
    expect({ keys: rows("keys"), permissions: permissionRows() }).toEqual(before);
  });

  test("updateKey, setPermissions, addPermissions: the key keeps its permissions and never holds 'documents.read'", async () => {
    const { keyId, key } = await createKey(h, { apiId, permissions: ["kept.one"] });
    for (const [path, body] of [
      ["/v2/keys.updateKey", { keyId, permissions: ["read"], name: "changed" }],
      ["/v2/keys.setPermissions", { keyId, permissions: ["READ"] }],
      ["/v2/keys.addPermissions", { keyId, permissions: ["kept.two", "read"] }],
    ] as const) {
      expectError(h, await h.post(path, body), 409, CONFLICT);
    }
    const view = await getKey(h, keyId);
    expect({ name: view.name, permissions: view.permissions }).toEqual({ name: undefined, permissions: ["kept.one"] });
    expect((await verify(h, key, { permissions: "documents.read" })).code).toBe("INSUFFICIENT_PERMISSIONS");
  });

  test("createRole: no role is created", async () => {
    const before = rows("roles");
    expectError(h, await h.post("/v2/permissions.createRole", { name: "reader", permissions: ["read"] }), 409, CONFLICT);
    expect(rows("roles")).toBe(before);
  });

  test("the permission is reachable by its own slug", async () => {
    const { key } = await createKey(h, { apiId, permissions: ["documents.read"] });
    expect(await verify(h, key, { permissions: "documents.read" })).toMatchObject({ code: "VALID", permissions: ["documents.read"] });
  });
});
