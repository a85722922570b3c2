import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import {
  allGrantsExcept, createKey, expectError, expectInvalid, INSUFFICIENT, KEY_NOT_FOUND, otherWorkspaceRootKey,
} from "../../../support/contract.ts";
import { auditRows, createRole, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.addRoles", {
  api: "add-roles",
  setup: async (h) => {
    const writerId = await createRole(h, "writer", ["doc.write", "doc.create"], "Writes documents");
    await createRole(h, "admin", ["all.things"]);
    await createRole(h, "empty");
    return { writerId };
  },
});

const addRoles = h.call;
const names = (data: Array<{ name: string }>) => data.map((r) => r.name);

describe("200", () => {
  test("adds roles and answers all of the key's roles by name; the very next verification has their permissions", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, roles: ["writer"] });
    expect((await verify(h, key, { permissions: "all.things" })).code).toBe("INSUFFICIENT_PERMISSIONS");
    const res = await addRoles({ keyId, roles: ["admin", "empty"] });
    expect(res.status).toBe(200);
    expect(names(res.body.data)).toEqual(["admin", "empty", "writer"]);
    expect(await verify(h, key, { permissions: "all.things AND doc.write" })).toMatchObject({ code: "VALID", roles: ["admin", "empty", "writer"] });
  });

  test("answers upstream's Role shape: description and permissions only when present", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const res = await addRoles({ keyId, roles: ["writer", "empty"] });
    const [empty, writer] = res.body.data;
    expect(Object.keys(empty).sort()).toEqual(["id", "name"]);
    expect(writer).toMatchObject({ id: h.fixture.writerId, name: "writer", description: "Writes documents" });
    expect(writer.permissions.map((p: { slug: string }) => p.slug)).toEqual(["doc.create", "doc.write"]);
    expect(writer.permissions[0]).toEqual({ id: expect.stringMatching(/^perm_/), name: "doc.create", slug: "doc.create", description: "Auto-created permission: doc.create" });
  });

  test("is idempotent; names match ignoring case", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, roles: ["admin"] });
    const res = await addRoles({ keyId, roles: ["ADMIN", "admin"] });
    expect(names(res.body.data)).toEqual(["admin"]);
  });

  test("writes one key.add_roles audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await addRoles({ keyId, roles: ["admin"] });
    expect(await auditRows(h, "key.add_roles", keyId)).toHaveLength(1);
  });
});

describe("400", () => {
  test.each([
    ["an empty list", { roles: [] }, "body.roles"],
    ["a name with spaces", { roles: ["a b"] }, "body.roles[0]"],
    ["more than 100 roles", { roles: Array.from({ length: 101 }, (_, i) => `r${i}`) }, "body.roles"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await addRoles({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without rbac.*.add_role_to_key", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("rbac.*.add_role_to_key", { keyId, roles: ["admin"] });
  });

  test("403: Missing one of these permissions without update_key (upstream v2_keys_add_roles 403_test 'insufficient permissions - no update_key')", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("api.*.update_key", { keyId, roles: ["admin"] }, h.apiId);
  });
});

describe("404", () => {
  test("an unknown role: 404 and no role is added", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const res = await addRoles({ keyId, roles: ["admin", "ghost"] });
    expectError(h, res, 404, "service/data/role_not_found", "Role 'ghost' was not found.");
    expect((await getKey(h, keyId)).roles).toBeUndefined();
  });

  test("a role id is not a name", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    expectError(h, await addRoles({ keyId, roles: [h.fixture.writerId] }), 404, "service/data/role_not_found", `Role '${h.fixture.writerId}' was not found.`);
  });

  test("a role of another workspace", async () => {
    const other = await otherWorkspaceRootKey(h, "add-roles-other");
    expect((await h.post("/v2/permissions.createRole", { name: "foreign" }, { key: other })).status).toBe(200);
    const { keyId } = await createKey(h, { apiId: h.apiId });
    expectError(h, await addRoles({ keyId, roles: ["foreign"] }), 404, "service/data/role_not_found");
  });

  test("an unknown key, and a key of another workspace", async () => {
    expectError(h, await addRoles({ keyId: "key_unknown", roles: ["admin"] }), 404, KEY_NOT_FOUND, "The specified key was not found.");
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId, roles: ["admin"] }, KEY_NOT_FOUND);
  });
});
