import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { allGrantsExcept, createKey, expectError, expectInvalid, INSUFFICIENT, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, createRole, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.setRoles", {
  api: "set-roles",
  setup: async (h) => {
    await createRole(h, "reader", ["r.read"]);
    await createRole(h, "owner", ["r.own"]);
    await createRole(h, "auditor", ["r.audit"]);
  },
});

const setRoles = h.call;
const names = (data: Array<{ name: string }>) => data.map((r) => r.name);

describe("200", () => {
  test("replaces the roles, answered by name; the very next verification has exactly the new ones", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, roles: ["reader"] });
    expect((await verify(h, key, { permissions: "r.read" })).code).toBe("VALID");
    const res = await setRoles({ keyId, roles: ["owner", "auditor"] });
    expect(res.status).toBe(200);
    expect(names(res.body.data)).toEqual(["auditor", "owner"]);
    expect(res.body.data[0].permissions.map((p: { slug: string }) => p.slug)).toEqual(["r.audit"]);
    const result = await verify(h, key, { permissions: "r.own AND r.audit" });
    expect(result).toMatchObject({ code: "VALID", roles: ["auditor", "owner"] });
    expect((await verify(h, key, { permissions: "r.read" })).code).toBe("INSUFFICIENT_PERMISSIONS");
  });

  test("[] removes every role", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, roles: ["reader", "owner"] });
    expect((await verify(h, key)).roles).toEqual(["owner", "reader"]);
    expect((await setRoles({ keyId, roles: [] })).body.data).toEqual([]);
    expect((await verify(h, key)).roles).toBeUndefined();
  });

  test("update_key, rbac.*.add_role_to_key and rbac.*.remove_role_from_key are enough", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const key = await h.rootKeyWith(["api.*.update_key", "rbac.*.add_role_to_key", "rbac.*.remove_role_from_key"]);
    expect((await setRoles({ keyId, roles: ["reader"] }, key)).status).toBe(200);
  });

  test("writes one key.set_roles audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await setRoles({ keyId, roles: ["reader"] });
    expect(await auditRows(h, "key.set_roles", keyId)).toHaveLength(1);
  });
});

describe("400", () => {
  test.each([
    ["no roles", {}, "body.roles"],
    ["a role name over 100 characters", { roles: ["r".repeat(101)] }, "body.roles[0]"],
    ["an unknown field", { roles: [], permissions: [] }, "body.permissions"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await setRoles({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without update_key", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["reader"] });
    expectError(h, await setRoles({ keyId, roles: [] }, await h.rootKeyWith(allGrantsExcept("api.*.update_key"))), 403, INSUFFICIENT);
    expect((await getKey(h, keyId)).roles).toEqual(["reader"]);
  });

  // Upstream asks only update_key, which would let setRoles hand out any role that addRoles refuses.
  test.each(["rbac.*.add_role_to_key", "rbac.*.remove_role_from_key"])("without %s: 403 naming it; the roles stay and no audit entry", async (grant) => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["reader"] });
    expectError(h, await setRoles({ keyId, roles: ["owner"] }, await h.rootKeyWith(allGrantsExcept(grant))), 403, INSUFFICIENT, `Missing permission: '${grant}'`);
    expect((await getKey(h, keyId)).roles).toEqual(["reader"]);
    expect(await auditRows(h, "key.set_roles", keyId)).toEqual([]);
  });
});

describe("404", () => {
  test("an unknown role: 404 and the roles stay", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["reader"] });
    expectError(h, await setRoles({ keyId, roles: ["owner", "ghost"] }), 404, "service/data/role_not_found", "Role 'ghost' was not found.");
    expect((await getKey(h, keyId)).roles).toEqual(["reader"]);
  });

  test("an unknown key, and a key of another workspace", async () => {
    expectError(h, await setRoles({ keyId: "key_unknown", roles: [] }), 404, KEY_NOT_FOUND, "The specified key was not found.");
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId, roles: [] }, KEY_NOT_FOUND);
  });
});
