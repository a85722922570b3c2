import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { embeddedOnly } from "../../../support/cluster-backend.ts";
import { expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows } from "../../../support/key-management.ts";
import { countRows, createPermission, PERMISSION_DUPLICATE, REQUEST_ID, simulateConcurrentInsert } from "./support.ts";

const h = routeContract("/v2/permissions.createPermission");

const create = h.call;

describe("200", () => {
  test("returns exactly {permissionId}; the permission is stored as given", async () => {
    const res = await create({ name: "Users Read", slug: "users.read", description: "Read user profiles" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: { permissionId: expect.stringMatching(/^perm_[a-zA-Z0-9]+$/) } });
    const got = await h.post("/v2/permissions.getPermission", { permission: res.body.data.permissionId });
    expect(got.body.data).toEqual({ id: res.body.data.permissionId, name: "Users Read", slug: "users.read", description: "Read user profiles" });
  });

  test("without a description, the stored permission has none (left out, not null)", async () => {
    const id = await createPermission(h, "plain.perm");
    const got = await h.post("/v2/permissions.getPermission", { permission: id });
    expect(got.body.data).toEqual({ id, name: "plain.perm", slug: "plain.perm" });
  });

  test("`rbac.*.create_permission` alone is enough", async () => {
    const res = await create({ name: "only.create", slug: "only.create" }, await h.rootKeyWith(["rbac.*.create_permission"]));
    expect(res.status).toBe(200);
  });

  test("slugs may hold letters, digits and _ : - . *", async () => {
    expect((await create({ name: "odd", slug: "a_b:c-d.e*" })).status).toBe(200);
  });

  test("writes one `permission.create` audit entry naming the permission and the root key", async () => {
    const res = await create({ name: "audited", slug: "audited" });
    const rows = await auditRows(h, "permission.create", res.body.data.permissionId);
    expect(rows.length).toBe(1);
    expect(rows[0]?.resources).toEqual([{ type: "permission", id: res.body.data.permissionId, name: "audited" }]);
    expect(rows[0]?.actorId).toMatch(/^rk_/);
  });

  test("the same name in another workspace is no conflict", async () => {
    await createPermission(h, "shared.name");
    const res = await create({ name: "shared.name", slug: "shared.name" }, await otherWorkspaceRootKey(h, "cp-other"));
    expect(res.status).toBe(200);
  });
});

describe("400", () => {
  test("name missing", async () => {
    expectInvalid(h, await create({ slug: "x" }), "body.name");
  });

  test("slug missing", async () => {
    expectInvalid(h, await create({ name: "x" }), "body.slug");
  });

  test("empty name", async () => {
    expectInvalid(h, await create({ name: "", slug: "x" }), "body.name");
  });

  test("name longer than 512", async () => {
    expectInvalid(h, await create({ name: "n".repeat(513), slug: "x" }), "body.name");
  });

  test("slug with a space", async () => {
    expectInvalid(h, await create({ name: "x", slug: "a b" }), "body.slug");
  });

  test("slug longer than 128", async () => {
    expectInvalid(h, await create({ name: "x", slug: "s".repeat(129) }), "body.slug");
  });

  test("description longer than 512", async () => {
    expectInvalid(h, await create({ name: "x", slug: "x", description: "d".repeat(513) }), "body.description");
  });

  test("unknown field", async () => {
    expectInvalid(h, await create({ name: "x", slug: "x", roles: [] }), "body.roles");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await create({ name: "x", slug: "x" }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without create_permission; the detail names it and nothing is stored", async () => {
    const before = await countRows(h, "permissions");
    await h.expectDeniedWithout("rbac.*.create_permission", { name: "denied", slug: "denied" });
    expect(await countRows(h, "permissions")).toBe(before);
  });
});

describe("409", () => {
  test("a duplicate name gets the spec's error body exactly", async () => {
    await createPermission(h, "documents.read");
    const res = await create({ name: "documents.read", slug: "documents-read-2" });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      meta: { requestId: REQUEST_ID },
      error: {
        title: "Conflict",
        detail: "A permission with name 'documents.read' already exists in this workspace.",
        status: 409,
        type: `${h.url}/docs/api-reference/errors-v2/service/data/permission/duplicate`,
      },
    });
    expect(res.body.error.type.endsWith("/api-reference/errors-v2/service/data/permission/duplicate")).toBe(true);
  });

  test("names compare case-insensitively", async () => {
    await createPermission(h, "Billing.Write");
    const res = await create({ name: "billing.WRITE", slug: "billing-write-2" });
    expectError(h, res, 409, PERMISSION_DUPLICATE, "A permission with name 'billing.WRITE' already exists in this workspace.");
    expect(res.body.error.title).toBe("Conflict");
  });

  test("a duplicate slug (any case) is the same 409, naming the slug", async () => {
    await createPermission(h, "reports.view", { name: "View reports" });
    const res = await create({ name: "Another name", slug: "REPORTS.view" });
    expectError(h, res, 409, PERMISSION_DUPLICATE, "A permission with slug 'REPORTS.view' already exists in this workspace.");
  });

  test("a retry of a successful create is 409 and stores nothing more", async () => {
    const body = { name: "retry.me", slug: "retry.me", description: "once" };
    expect((await create(body)).status).toBe(200);
    const before = { permissions: await countRows(h, "permissions"), audit: await countRows(h, "audit_logs") };
    expectError(h, await create(body), 409, PERMISSION_DUPLICATE, "A permission with name 'retry.me' already exists in this workspace.");
    expect({ permissions: await countRows(h, "permissions"), audit: await countRows(h, "audit_logs") }).toEqual(before);
  });

  embeddedOnly("a SQLite trigger plays the concurrent writer")("a duplicate only the unique index sees (a concurrent create) is still 409, never 500", async () => {
    const cleanup = simulateConcurrentInsert(h, "permissions", "raced.perm");
    try {
      const res = await create({ name: "raced.perm", slug: "raced.perm" });
      expectError(h, res, 409, PERMISSION_DUPLICATE, "A permission with name 'raced.perm' already exists in this workspace.");
    } finally {
      cleanup();
    }
    expect((await auditRows(h, "permission.create", "perm_racer")).length).toBe(0);
  });
});
