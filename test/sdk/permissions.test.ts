/**
 * The official SDK (`@unkey/api` 2.5) against tollgate: every `permissions.*` method must parse our
 * responses (a ResponseValidationError would mean a wrong shape) and map our errors to its classes.
 */
import { describe, expect, test } from "bun:test";
import { ConflictErrorResponse, ForbiddenErrorResponse, NotFoundErrorResponse } from "@unkey/api/models/errors";
import { testServer } from "../support/route-contract.ts";
import { sdkClient, sdkFor } from "./client.ts";

const h = testServer();
const unkey = sdkFor(h);

describe("permissions", () => {
  test("createPermission, getPermission, deletePermission", async () => {
    const created = await unkey.permissions.createPermission({ name: "Read documents", slug: "documents.read", description: "Read any document" });
    expect(created.meta.requestId).toMatch(/^req_/);
    const permissionId = created.data.permissionId;
    expect(permissionId).toMatch(/^perm_/);

    const got = await unkey.permissions.getPermission({ permission: permissionId });
    expect(got.data).toEqual({ id: permissionId, name: "Read documents", slug: "documents.read", description: "Read any document" });
    const bySlug = await unkey.permissions.getPermission({ permission: "documents.read" });
    expect(bySlug.data.id).toBe(permissionId);

    const deleted = await unkey.permissions.deletePermission({ permission: permissionId });
    expect(deleted.data).toEqual({});
    await expect(unkey.permissions.getPermission({ permission: permissionId })).rejects.toBeInstanceOf(NotFoundErrorResponse);
  });

  test("a duplicate name is a ConflictErrorResponse carrying the spec's error", async () => {
    await unkey.permissions.createPermission({ name: "dup.name", slug: "dup.name" });
    const error = await unkey.permissions.createPermission({ name: "DUP.name", slug: "dup.other" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictErrorResponse);
    const conflict = error as ConflictErrorResponse;
    expect(conflict.data$.error.status).toBe(409);
    expect(conflict.data$.error.title).toBe("Conflict");
    expect(conflict.data$.error.type.endsWith("/api-reference/errors-v2/service/data/permission/duplicate")).toBe(true);
    expect(conflict.data$.meta.requestId).toMatch(/^req_/);
  });

  test("a missing root-key permission is a ForbiddenErrorResponse", async () => {
    const limited = sdkClient(h, await h.rootKeyWith(["rbac.*.read_role"]));
    const error = await limited.permissions.createPermission({ name: "nope", slug: "nope" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenErrorResponse);
    expect((error as ForbiddenErrorResponse).data$.error.detail).toBe("Missing permission: 'rbac.*.create_permission'");
  });

  test("listPermissions pages through every permission and stops after the last page", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await unkey.permissions.createPermission({ name: `paged.${i}`, slug: `paged.${i}` })).data.permissionId);
    const seen: string[] = [];
    let pages = 0;
    for await (const page of await unkey.permissions.listPermissions({ limit: 2, search: "paged." })) {
      pages++;
      expect(page.result.meta.requestId).toMatch(/^req_/);
      seen.push(...page.result.data.map((p) => p.id));
      expect(page.result.pagination?.hasMore ?? false).toBe(pages < 3);
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].sort());
  });
});

describe("roles", () => {
  test("createRole, getRole, deleteRole", async () => {
    const created = await unkey.permissions.createRole({ name: "Support.Agent", description: "First line", permissions: ["tickets.read", "tickets.write"] });
    const roleId = created.data.roleId;
    expect(roleId).toMatch(/^role_/);

    const got = await unkey.permissions.getRole({ role: roleId });
    expect(got.data.name).toBe("Support.Agent");
    expect(got.data.description).toBe("First line");
    expect((got.data.permissions ?? []).map((p) => p.slug).sort()).toEqual(["tickets.read", "tickets.write"]);

    const bare = await unkey.permissions.createRole({ name: "bare" });
    expect((await unkey.permissions.getRole({ role: "bare" })).data).toEqual({ id: bare.data.roleId, name: "bare" });

    expect((await unkey.permissions.deleteRole({ role: roleId })).data).toEqual({});
    await expect(unkey.permissions.getRole({ role: roleId })).rejects.toBeInstanceOf(NotFoundErrorResponse);
  });

  test("setRolePermissions answers the role's permissions as Permission records", async () => {
    const { roleId } = (await unkey.permissions.createRole({ name: "sdk.set", permissions: ["set.old"] })).data;
    const res = await unkey.permissions.setRolePermissions({ roleId, permissions: ["set.new", "set.other"] });
    expect(res.meta.requestId).toMatch(/^req_/);
    expect(res.data.map((p) => p.slug).sort()).toEqual(["set.new", "set.other"]);
    expect(res.data[0]).toEqual({ id: expect.stringMatching(/^perm_/), name: res.data[0]!.slug, slug: res.data[0]!.slug, description: `Auto-created permission: ${res.data[0]!.slug}` });
    expect((await unkey.permissions.setRolePermissions({ roleId, permissions: [] })).data).toEqual([]);
    await expect(unkey.permissions.setRolePermissions({ roleId: "role_missing", permissions: [] })).rejects.toBeInstanceOf(NotFoundErrorResponse);
  });

  test("a duplicate role name is a ConflictErrorResponse", async () => {
    await unkey.permissions.createRole({ name: "twin" });
    await expect(unkey.permissions.createRole({ name: "TWIN" })).rejects.toBeInstanceOf(ConflictErrorResponse);
  });

  test("listRoles pages through every role, each with its permissions", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await unkey.permissions.createRole({ name: `listed-${i}`, permissions: [`listed.${i}`] })).data.roleId);
    const seen: Array<{ id: string; slugs: string[] }> = [];
    let pages = 0;
    for await (const page of await unkey.permissions.listRoles({ limit: 1, search: "listed-" })) {
      pages++;
      seen.push(...page.result.data.map((r) => ({ id: r.id, slugs: (r.permissions ?? []).map((p) => p.slug) })));
    }
    expect(pages).toBe(3);
    expect(seen.map((r) => r.id)).toEqual([...ids].sort());
    for (const r of seen) expect(r.slugs.length).toBe(1);
  });
});
