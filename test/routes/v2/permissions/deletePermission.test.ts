import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createApi, createKey, expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { RbacService } from "../../../../src/services/rbac/index.ts";
import { embeddedOnly } from "../../../support/cluster-backend.ts";
import { embeddedRecords } from "../../../../src/storage/records/index.ts";
import { auditRows } from "../../../support/key-management.ts";
import { countRows, createPermission, createRole, PERMISSION_NOT_FOUND, REQUEST_ID } from "./support.ts";

const h = routeContract("/v2/permissions.deletePermission");

const del = h.call;
const get = (permission: string) => h.post("/v2/permissions.getPermission", { permission });
const NOT_FOUND_DETAIL = "The requested permission does not exist.";

describe("200", () => {
  test("by id: answers data {} and the permission is gone", async () => {
    const id = await createPermission(h, "gone.by.id");
    const res = await del({ permission: id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: {} });
    expectError(h, await get(id), 404, PERMISSION_NOT_FOUND);
  });

  test("by slug, ignoring case", async () => {
    const id = await createPermission(h, "gone.by.slug");
    expect((await del({ permission: "GONE.by.slug" })).status).toBe(200);
    expectError(h, await get(id), 404, PERMISSION_NOT_FOUND);
  });

  test("removes it from roles, which keep their other permissions", async () => {
    const roleId = await createRole(h, "editor", ["doc.read", "doc.write"]);
    expect((await del({ permission: "doc.write" })).status).toBe(200);
    const role = await h.post("/v2/permissions.getRole", { role: roleId });
    expect(role.body.data.permissions.map((p: { slug: string }) => p.slug)).toEqual(["doc.read"]);
  });

  test("a key loses it at once, directly and through a role, even after a cached verification", async () => {
    const apiId = await createApi(h, "verify");
    await createRole(h, "viewer", ["via.role"]);
    const { key } = await createKey(h, { apiId, permissions: ["direct.perm"], roles: ["viewer"] });
    const verify = (permissions: string) => h.post("/v2/keys.verifyKey", { key, permissions });
    expect((await verify("direct.perm AND via.role")).body.data.code).toBe("VALID");
    expect((await del({ permission: "direct.perm" })).status).toBe(200);
    expect((await verify("direct.perm")).body.data.code).toBe("INSUFFICIENT_PERMISSIONS");
    expect((await del({ permission: "via.role" })).status).toBe(200);
    expect((await verify("via.role")).body.data.code).toBe("INSUFFICIENT_PERMISSIONS");
    expect(await countRows(h, "key_permissions")).toBe(0);
  });

  test("writes one `permission.delete` audit entry", async () => {
    const id = await createPermission(h, "audited.delete", { name: "Audited" });
    await del({ permission: id });
    const rows = await auditRows(h, "permission.delete", id);
    expect(rows.length).toBe(1);
    expect(rows[0]?.resources).toEqual([{ type: "permission", id, name: "Audited" }]);
  });

  embeddedOnly("builds its own service over the embedded records")("calls onAccessChanged once after the delete, and not when nothing was deleted", async () => {
    let calls = 0;
    const svc = new RbacService({ records: embeddedRecords(h.embedded.storage), clock: h.clock, onAccessChanged: () => { calls++; } });
    const principal = h.running.services.auth.authenticate(`Bearer ${h.rootKey}`);
    const id = await createPermission(h, "callback.perm");
    await svc.deletePermission(principal, { permission: id });
    expect(calls).toBe(1);
    const again = async () => svc.deletePermission(principal, { permission: id });
    await expect(again()).rejects.toThrow(NOT_FOUND_DETAIL);
    expect(calls).toBe(1);
  });
});

describe("400", () => {
  test("permission missing", async () => {
    expectInvalid(h, await del({}), "body.permission");
  });

  test("permission with characters outside the slug pattern", async () => {
    expectInvalid(h, await del({ permission: "a/b" }), "body.permission");
  });

  test("unknown field", async () => {
    expectInvalid(h, await del({ permission: "x", force: true }), "body.force");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await del({ permission: "x" }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without delete_permission; the detail names it and nothing is deleted", async () => {
    const id = await createPermission(h, "kept");
    await h.expectDeniedWithout("rbac.*.delete_permission", { permission: id });
    expect((await get(id)).status).toBe(200);
  });
});

describe("404", () => {
  test("unknown permission", async () => {
    expectError(h, await del({ permission: "perm_doesnotexist" }), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("a second delete", async () => {
    const id = await createPermission(h, "twice");
    expect((await del({ permission: id })).status).toBe(200);
    expectError(h, await del({ permission: id }), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("a permission of another workspace stays untouched", async () => {
    const id = await createPermission(h, "foreign.target");
    const foreign = await otherWorkspaceRootKey(h, "other");
    expectError(h, await del({ permission: id }, foreign), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await del({ permission: "foreign.target" }, foreign), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
    expect((await get(id)).status).toBe(200);
  });
});
