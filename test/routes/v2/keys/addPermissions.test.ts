import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createKey, expectError, expectInvalid, INSUFFICIENT, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, countRows, createPermission, createRole, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.addPermissions", {
  api: "add-permissions",
  setup: (h) => createRole(h, "add-perm-role", ["via.role"]),
});

const add = h.call;
const slugs = (data: Array<{ slug: string }>) => data.map((p) => p.slug);
const permissionCount = (slug: string) => countRows(h, "permissions", "slug", slug);

describe("200", () => {
  test("adds to the direct permissions and answers all of them; the very next verification sees them", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, permissions: ["docs.read"], roles: ["add-perm-role"] });
    expect((await verify(h, key, { permissions: "docs.write" })).code).toBe("INSUFFICIENT_PERMISSIONS");
    const res = await add({ keyId, permissions: ["docs.write"] });
    expect(res.status).toBe(200);
    expect(slugs(res.body.data)).toEqual(["docs.read", "docs.write"]);
    expect(await verify(h, key, { permissions: "docs.read AND docs.write AND via.role" })).toMatchObject({ code: "VALID" });
  });

  test("answers upstream's Permission shape; description only when set", async () => {
    const id = await createPermission(h, "plain.perm");
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const res = await add({ keyId, permissions: ["plain.perm", "fresh.perm"] });
    const fresh = res.body.data.find((p: { slug: string }) => p.slug === "fresh.perm");
    expect(res.body.data.find((p: { slug: string }) => p.slug === "plain.perm")).toEqual({ id, name: "plain.perm", slug: "plain.perm" });
    expect(fresh).toEqual({ id: expect.stringMatching(/^perm_/), name: "fresh.perm", slug: "fresh.perm", description: "Auto-created permission: fresh.perm" });
  });

  test("is idempotent: an assigned permission or a repeated slug adds nothing", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, permissions: ["idem.one"] });
    const res = await add({ keyId, permissions: ["idem.one", "idem.two", "idem.two"] });
    expect(slugs(res.body.data)).toEqual(["idem.one", "idem.two"]);
    expect(slugs((await add({ keyId, permissions: ["idem.two"] })).body.data)).toEqual(["idem.one", "idem.two"]);
    expect(await permissionCount("idem.two")).toBe(1);
  });

  test("existing permissions need no create_permission", async () => {
    await createPermission(h, "exists.already");
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const rootKey = await h.rootKeyWith(["api.*.update_key", "rbac.*.add_permission_to_key"]);
    expect((await add({ keyId, permissions: ["exists.already"] }, rootKey)).status).toBe(200);
  });

  test("writes one key.add_permissions audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await add({ keyId, permissions: ["audit.a", "audit.b"] });
    const rows = await auditRows(h, "key.add_permissions", keyId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.description).toContain("audit.a, audit.b");
  });
});

describe("400", () => {
  test.each([
    ["an empty list", { permissions: [] }, "body.permissions"],
    ["no permissions", {}, "body.permissions"],
    ["a slug with spaces", { permissions: ["a b"] }, "body.permissions[0]"],
    ["a slug over 100 characters", { permissions: ["p".repeat(101)] }, "body.permissions[0]"],
    ["an unknown field", { permissions: ["a"], roles: [] }, "body.roles"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await add({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without rbac.*.add_permission_to_key", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("rbac.*.add_permission_to_key", { keyId, permissions: ["x.y"] });
  });

  test("without update_key on the key's API", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectDeniedWithout("api.*.update_key", { keyId, permissions: ["x.y"] }, h.apiId);
  });

  test("a new slug without rbac.*.create_permission: nothing is created or added", async () => {
    await createPermission(h, "known.slug");
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    const rootKey = await h.rootKeyWith(["api.*.update_key", "rbac.*.add_permission_to_key"]);
    const res = await add({ keyId, permissions: ["known.slug", "brand.new"] }, rootKey);
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'rbac.*.create_permission'");
    expect(await permissionCount("brand.new")).toBe(0);
    expect((await verify(h, key)).permissions).toBeUndefined();
  });
});

describe("404", () => {
  test("an unknown key", async () => {
    expectError(h, await add({ keyId: "key_unknown", permissions: ["a"] }), 404, KEY_NOT_FOUND, "The specified key was not found.");
  });

  test("a key of another workspace", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    await h.expectHiddenFromOtherWorkspace({ keyId, permissions: ["a"] }, KEY_NOT_FOUND, "The specified key was not found.");
  });
});
