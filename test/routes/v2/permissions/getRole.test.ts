import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { createPermission, createRole, REQUEST_ID, ROLE_NOT_FOUND } from "./support.ts";

const h = routeContract("/v2/permissions.getRole", {
  setup: async (h) => {
    const readId = await createPermission(h, "docs.read", { description: "Read docs" });
    const writeId = await createPermission(h, "docs.write");
    const res = await h.post("/v2/permissions.createRole", { name: "Docs.Editor", description: "Edits docs", permissions: ["docs.write", "docs.read"] });
    return { readId, writeId, roleId: res.body.data.roleId as string };
  },
});

const get = h.call;
const NOT_FOUND_DETAIL = "The requested role does not exist.";

describe("200", () => {
  test("by id: the role with its permissions, ordered by id", async () => {
    const res = await get({ role: h.fixture.roleId });
    expect(res.status).toBe(200);
    const perms = [
      { id: h.fixture.readId, name: "docs.read", slug: "docs.read", description: "Read docs" },
      { id: h.fixture.writeId, name: "docs.write", slug: "docs.write" },
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: { id: h.fixture.roleId, name: "Docs.Editor", description: "Edits docs", permissions: perms } });
  });

  test("by name, ignoring case", async () => {
    expect((await get({ role: "docs.EDITOR" })).body.data.id).toBe(h.fixture.roleId);
  });

  test("a role without permissions or description leaves both out", async () => {
    const id = await createRole(h, "bare-role");
    expect((await get({ role: id })).body.data).toEqual({ id, name: "bare-role" });
  });

  test("`rbac.*.read_role` alone is enough", async () => {
    expect((await get({ role: h.fixture.roleId }, await h.rootKeyWith(["rbac.*.read_role"]))).status).toBe(200);
  });
});

describe("400", () => {
  test("role missing", async () => {
    expectInvalid(h, await get({}), "body.role");
  });

  test("empty role", async () => {
    expectInvalid(h, await get({ role: "" }), "body.role");
  });

  test("role longer than 128", async () => {
    expectInvalid(h, await get({ role: "r".repeat(129) }), "body.role");
  });

  test("unknown field", async () => {
    expectInvalid(h, await get({ role: h.fixture.roleId, name: "x" }), "body.name");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await get({ role: h.fixture.roleId }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_role; the detail names it", async () => {
    await h.expectDeniedWithout("rbac.*.read_role", { role: h.fixture.roleId });
  });
});

describe("404", () => {
  test("unknown id or name", async () => {
    expectError(h, await get({ role: "role_doesnotexist" }), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await get({ role: "Nobody" }), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("a role of another workspace, by id or name", async () => {
    const foreign = await otherWorkspaceRootKey(h, "other");
    expectError(h, await get({ role: h.fixture.roleId }, foreign), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await get({ role: "Docs.Editor" }, foreign), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
  });
});
