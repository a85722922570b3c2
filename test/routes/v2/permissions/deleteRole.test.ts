import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createApi, createKey, expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { RbacService } from "../../../../src/services/rbac/index.ts";
import { embeddedOnly } from "../../../support/cluster-backend.ts";
import { embeddedRecords } from "../../../../src/storage/records/index.ts";
import { auditRows } from "../../../support/key-management.ts";
import { countRows, createRole, REQUEST_ID, ROLE_NOT_FOUND } from "./support.ts";

const h = routeContract("/v2/permissions.deleteRole");

const del = h.call;
const get = (role: string) => h.post("/v2/permissions.getRole", { role });
const NOT_FOUND_DETAIL = "The requested role does not exist.";

describe("200", () => {
  test("by id: answers data {} and the role is gone; its permissions stay", async () => {
    const id = await createRole(h, "gone-by-id", ["kept.perm"]);
    const res = await del({ role: id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: {} });
    expectError(h, await get(id), 404, ROLE_NOT_FOUND);
    expect((await h.post("/v2/permissions.getPermission", { permission: "kept.perm" })).status).toBe(200);
  });

  test("by name, ignoring case", async () => {
    const id = await createRole(h, "Gone.By.Name");
    expect((await del({ role: "gone.by.NAME" })).status).toBe(200);
    expectError(h, await get(id), 404, ROLE_NOT_FOUND);
  });

  test("its keys lose it and the permissions it gave, at once, even after a cached verification", async () => {
    const apiId = await createApi(h, "verify");
    await createRole(h, "reader", ["books.read"]);
    const { key, keyId } = await createKey(h, { apiId, roles: ["reader"] });
    const verify = () => h.post("/v2/keys.verifyKey", { key, permissions: "books.read" });
    expect((await verify()).body.data.code).toBe("VALID");
    const links = { rolePermissions: await countRows(h, "role_permissions"), keyRoles: await countRows(h, "key_roles") };
    expect((await del({ role: "reader" })).status).toBe(200);
    expect((await verify()).body.data.code).toBe("INSUFFICIENT_PERMISSIONS");
    expect({ rolePermissions: await countRows(h, "role_permissions"), keyRoles: await countRows(h, "key_roles") })
      .toEqual({ rolePermissions: links.rolePermissions - 1, keyRoles: links.keyRoles - 1 });
    const got = await h.post("/v2/keys.getKey", { keyId });
    expect(got.body.data.roles ?? []).toEqual([]);
  });

  test("writes one `role.delete` audit entry", async () => {
    const id = await createRole(h, "audited-delete");
    await del({ role: id });
    const rows = await auditRows(h, "role.delete", id);
    expect(rows.length).toBe(1);
    expect(rows[0]?.resources).toEqual([{ type: "role", id, name: "audited-delete" }]);
  });

  embeddedOnly("builds its own service over the embedded records")("calls onAccessChanged once after the delete, and not when nothing was deleted", async () => {
    let calls = 0;
    const svc = new RbacService({ records: embeddedRecords(h.embedded.storage), clock: h.clock, onAccessChanged: () => { calls++; } });
    const principal = h.running.services.auth.authenticate(`Bearer ${h.rootKey}`);
    const id = await createRole(h, "callback-role");
    await svc.deleteRole(principal, { role: id });
    expect(calls).toBe(1);
    const again = async () => svc.deleteRole(principal, { role: id });
    await expect(again()).rejects.toThrow(NOT_FOUND_DETAIL);
    expect(calls).toBe(1);
  });
});

describe("400", () => {
  test("role missing", async () => {
    expectInvalid(h, await del({}), "body.role");
  });

  test("role longer than 128", async () => {
    expectInvalid(h, await del({ role: "r".repeat(129) }), "body.role");
  });

  test("unknown field", async () => {
    expectInvalid(h, await del({ role: "x", cascade: true }), "body.cascade");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await del({ role: "x" }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without delete_role; the detail names it and nothing is deleted", async () => {
    const id = await createRole(h, "kept-role");
    await h.expectDeniedWithout("rbac.*.delete_role", { role: id });
    expect((await get(id)).status).toBe(200);
  });
});

describe("404", () => {
  test("unknown role", async () => {
    expectError(h, await del({ role: "role_doesnotexist" }), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("a second delete", async () => {
    const id = await createRole(h, "twice");
    expect((await del({ role: id })).status).toBe(200);
    expectError(h, await del({ role: id }), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("a role of another workspace stays untouched", async () => {
    const id = await createRole(h, "foreign-target");
    const foreign = await otherWorkspaceRootKey(h, "other");
    expectError(h, await del({ role: id }, foreign), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await del({ role: "foreign-target" }, foreign), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
    expect((await get(id)).status).toBe(200);
  });
});
