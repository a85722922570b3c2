/**
 * TOLLGATE_WORKSPACE_MAX_PERMISSIONS and _MAX_ROLES on every route that creates them, permissions
 * made on the fly included: all or nothing, reads and verifications at a full quota, room again
 * after a delete.
 */
import { describe, expect, test } from "bun:test";
import { testServer } from "../../support/route-contract.ts";
import { countIn, expectQuotaExceeded, expectUsageMatchesRecords, newWorkspace, SMALL_QUOTAS, type Workspace } from "./support.ts";

const h = testServer({ env: SMALL_QUOTAS });

const PERMISSIONS = ["TOLLGATE_WORKSPACE_MAX_PERMISSIONS", "5"] as const;

async function createPermissions(ws: Workspace, slugs: string[]): Promise<void> {
  for (const slug of slugs) expect((await ws.post("/v2/permissions.createPermission", { name: slug, slug })).status).toBe(200);
}

describe("permissions (TOLLGATE_WORKSPACE_MAX_PERMISSIONS=5)", () => {
  test("a createKey that would create 5 permissions with room for 2 creates nothing: no key, no permission", async () => {
    const ws = await newWorkspace(h);
    await createPermissions(ws, ["p.one", "p.two", "p.three"]);
    const res = await ws.post("/v2/keys.createKey", { apiId: ws.apiId, permissions: ["n.a", "n.b", "n.c", "n.d", "n.e"] });
    expectQuotaExceeded(res, "permissions", ...PERMISSIONS);
    expect(res.body.error.detail).toContain("would take it to 8");
    expect(await countIn(h, "permissions", ws.id)).toBe(3);
    expect(await countIn(h, "keys", ws.id)).toBe(0);
    // Existing permissions are no creation: a key holding them is made at a full quota too.
    await createPermissions(ws, ["p.four", "p.five"]);
    const key = await ws.post("/v2/keys.createKey", { apiId: ws.apiId, permissions: ["p.one", "p.five"] });
    expect(key.status).toBe(200);
    const verified = await ws.post("/v2/keys.verifyKey", { key: key.body.data.key, permissions: "p.one AND p.five" });
    expect(verified.body.data).toMatchObject({ valid: true, code: "VALID" });
    await expectUsageMatchesRecords(h, ws.id);
  });

  test("createPermission, addPermissions, setPermissions, updateKey, createRole and setRolePermissions are 429 past it and change nothing", async () => {
    const ws = await newWorkspace(h);
    await createPermissions(ws, ["p.1", "p.2", "p.3", "p.4", "p.5"]);
    const { keyId } = (await ws.post("/v2/keys.createKey", { apiId: ws.apiId, permissions: ["p.1"] })).body.data;
    const roleId = (await ws.post("/v2/permissions.createRole", { name: "reader", permissions: ["p.2"] })).body.data.roleId;
    const attempts: Array<[string, unknown]> = [
      ["/v2/permissions.createPermission", { name: "p.6", slug: "p.6" }],
      ["/v2/keys.addPermissions", { keyId, permissions: ["p.3", "p.6"] }],
      ["/v2/keys.setPermissions", { keyId, permissions: ["p.6"] }],
      ["/v2/keys.updateKey", { keyId, permissions: ["p.6"], name: "renamed" }],
      ["/v2/permissions.createRole", { name: "writer", permissions: ["p.6"] }],
      ["/v2/permissions.setRolePermissions", { role: roleId, permissions: ["p.6"] }],
    ];
    for (const [path, body] of attempts) expectQuotaExceeded(await ws.post(path, body), "permissions", ...PERMISSIONS);
    expect(await countIn(h, "permissions", ws.id)).toBe(5);
    expect(await countIn(h, "roles", ws.id)).toBe(1);
    const key = (await ws.post("/v2/keys.getKey", { keyId })).body.data;
    expect(key.name).toBeUndefined();
    expect(key.permissions).toEqual(["p.1"]);
    expect((await ws.post("/v2/permissions.getRole", { role: roleId })).body.data.permissions.map((p: { slug: string }) => p.slug)).toEqual(["p.2"]);
    expect((await ws.post("/v2/permissions.listPermissions", {})).body.data).toHaveLength(5);
    expect((await ws.post("/v2/permissions.deletePermission", { permission: "p.5" })).status).toBe(200);
    expect((await ws.post("/v2/keys.addPermissions", { keyId, permissions: ["p.6"] })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });
});

describe("roles (TOLLGATE_WORKSPACE_MAX_ROLES=2)", () => {
  test("the third role is 429 naming the quota; deleting one makes room", async () => {
    const ws = await newWorkspace(h);
    const first = (await ws.post("/v2/permissions.createRole", { name: "one" })).body.data.roleId;
    expect((await ws.post("/v2/permissions.createRole", { name: "two" })).status).toBe(200);
    const res = await ws.post("/v2/permissions.createRole", { name: "three", permissions: ["fresh.perm"] });
    expectQuotaExceeded(res, "roles", "TOLLGATE_WORKSPACE_MAX_ROLES", "2");
    expect(await countIn(h, "roles", ws.id)).toBe(2);
    expect(await countIn(h, "permissions", ws.id)).toBe(0);
    expect((await ws.post("/v2/permissions.listRoles", {})).body.data).toHaveLength(2);
    const key = await ws.post("/v2/keys.createKey", { apiId: ws.apiId, roles: ["one", "two"] });
    expect(key.status).toBe(200);
    expect((await ws.post("/v2/keys.verifyKey", { key: key.body.data.key })).body.data.roles).toEqual(["one", "two"]);
    expect((await ws.post("/v2/permissions.deleteRole", { role: first })).status).toBe(200);
    expect((await ws.post("/v2/permissions.createRole", { name: "three" })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });
});
