import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createKey, expectError, expectInvalid, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, createRole, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.removeRoles", {
  api: "remove-roles",
  setup: async (h) => {
    await createRole(h, "alpha", ["alpha.perm"]);
    await createRole(h, "beta", ["beta.perm"]);
    await createRole(h, "unused");
  },
});

const removeRoles = h.call;
const names = (data: Array<{ name: string }>) => data.map((r) => r.name);

describe("200", () => {
  test("removes roles and answers the rest; the very next verification loses their permissions", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, roles: ["alpha", "beta"] });
    expect((await verify(h, key, { permissions: "alpha.perm" })).code).toBe("VALID");
    const res = await removeRoles({ keyId, roles: ["alpha"] });
    expect(res.status).toBe(200);
    expect(names(res.body.data)).toEqual(["beta"]);
    expect(await verify(h, key, { permissions: "alpha.perm" })).toMatchObject({ code: "INSUFFICIENT_PERMISSIONS", roles: ["beta"] });
  });

  test("a role that exists but is not assigned: 200, nothing changes", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["beta"] });
    const res = await removeRoles({ keyId, roles: ["unused"] });
    expect(res.status).toBe(200);
    expect(names(res.body.data)).toEqual(["beta"]);
  });

  test("update_key and rbac.*.remove_role_from_key are enough", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["alpha"] });
    const res = await removeRoles({ keyId, roles: ["alpha"] }, await h.rootKeyWith([`api.${h.apiId}.update_key`, "rbac.*.remove_role_from_key"]));
    expect({ status: res.status, data: res.body.data }).toEqual({ status: 200, data: [] });
  });

  test("writes one key.remove_roles audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["alpha"] });
    await removeRoles({ keyId, roles: ["alpha"] });
    expect(await auditRows(h, "key.remove_roles", keyId)).toHaveLength(1);
  });
});

describe("400", () => {
  test.each([
    ["an empty list", { roles: [] }, "body.roles"],
    ["roles as a string", { roles: "alpha" }, "body.roles"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await removeRoles({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without update_key; the roles stay", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["alpha"] });
    await h.expectDeniedWithout("api.*.update_key", { keyId, roles: ["alpha"] }, h.apiId);
    expect((await getKey(h, keyId)).roles).toEqual(["alpha"]);
  });

  test("without rbac.*.remove_role_from_key (upstream asks only update_key); the roles stay", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["alpha"] });
    await h.expectDeniedWithout("rbac.*.remove_role_from_key", { keyId, roles: ["alpha"] });
    expect((await getKey(h, keyId)).roles).toEqual(["alpha"]);
  });
});

describe("404", () => {
  test("an unknown role: 404 and nothing is removed", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["alpha"] });
    expectError(h, await removeRoles({ keyId, roles: ["alpha", "ghost"] }), 404, "service/data/role_not_found", "Role 'ghost' was not found.");
    expect((await getKey(h, keyId)).roles).toEqual(["alpha"]);
  });

  test("an unknown key, and a key of another workspace", async () => {
    expectError(h, await removeRoles({ keyId: "key_unknown", roles: ["alpha"] }), 404, KEY_NOT_FOUND, "The specified key was not found.");
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["alpha"] });
    await h.expectHiddenFromOtherWorkspace({ keyId, roles: ["alpha"] }, KEY_NOT_FOUND);
  });
});
