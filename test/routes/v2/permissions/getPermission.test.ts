import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { createPermission, PERMISSION_NOT_FOUND, REQUEST_ID } from "./support.ts";

const h = routeContract("/v2/permissions.getPermission", {
  setup: async (h) => ({ permissionId: await createPermission(h, "documents.read", { name: "Read documents", description: "Read any document" }) }),
});

const get = h.call;
const NOT_FOUND_DETAIL = "The requested permission does not exist.";

describe("200", () => {
  test("by id: exactly {id, name, slug, description}", async () => {
    const res = await get({ permission: h.fixture.permissionId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      meta: { requestId: REQUEST_ID },
      data: { id: h.fixture.permissionId, name: "Read documents", slug: "documents.read", description: "Read any document" },
    });
  });

  test("by slug, ignoring case", async () => {
    expect((await get({ permission: "documents.read" })).body.data.id).toBe(h.fixture.permissionId);
    expect((await get({ permission: "Documents.READ" })).body.data.id).toBe(h.fixture.permissionId);
  });

  test("a permission without description leaves the field out", async () => {
    const id = await createPermission(h, "bare");
    const res = await get({ permission: id });
    expect(res.body.data).toEqual({ id, name: "bare", slug: "bare" });
    expect("description" in res.body.data).toBe(false);
  });

  test("`rbac.*.read_permission` alone is enough", async () => {
    expect((await get({ permission: h.fixture.permissionId }, await h.rootKeyWith(["rbac.*.read_permission"]))).status).toBe(200);
  });
});

describe("400", () => {
  test("permission missing", async () => {
    expectInvalid(h, await get({}), "body.permission");
  });

  test("empty permission", async () => {
    expectInvalid(h, await get({ permission: "" }), "body.permission");
  });

  test("permission with characters outside the slug pattern", async () => {
    expectInvalid(h, await get({ permission: "a b" }), "body.permission");
  });

  test("permission longer than 128", async () => {
    expectInvalid(h, await get({ permission: "p".repeat(129) }), "body.permission");
  });

  test("unknown field", async () => {
    expectInvalid(h, await get({ permission: h.fixture.permissionId, slug: "x" }), "body.slug");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await get({ permission: h.fixture.permissionId }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_permission; the detail names it", async () => {
    await h.expectDeniedWithout("rbac.*.read_permission", { permission: h.fixture.permissionId });
  });
});

describe("404", () => {
  test("unknown id", async () => {
    expectError(h, await get({ permission: "perm_doesnotexist" }), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("unknown slug", async () => {
    expectError(h, await get({ permission: "no.such.slug" }), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("a permission of another workspace, by id or slug, even with every permission there", async () => {
    const foreign = await otherWorkspaceRootKey(h, "other");
    expectError(h, await get({ permission: h.fixture.permissionId }, foreign), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await get({ permission: "documents.read" }, foreign), 404, PERMISSION_NOT_FOUND, NOT_FOUND_DETAIL);
  });
});
