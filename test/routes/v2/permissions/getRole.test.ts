import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { allGrantsExcept, expectError, expectInvalid, INSUFFICIENT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { createPermission, createRole, REQUEST_ID, ROLE_NOT_FOUND } from "./support.ts";

let h: Harness;
let roleId: string;
let readId: string;
let writeId: string;
beforeAll(async () => {
  h = await startHarness();
  readId = await createPermission(h, "docs.read", { description: "Read docs" });
  writeId = await createPermission(h, "docs.write");
  const res = await h.post("/v2/permissions.createRole", { name: "Docs.Editor", description: "Edits docs", permissions: ["docs.write", "docs.read"] });
  roleId = res.body.data.roleId;
});
afterAll(async () => { await h.stop(); });

const get = (body: unknown, key?: string) => h.post("/v2/permissions.getRole", body, key === undefined ? {} : { key });
const NOT_FOUND_DETAIL = "The requested role does not exist.";

describe("200", () => {
  test("by id: the role with its permissions, ordered by id", async () => {
    const res = await get({ role: roleId });
    expect(res.status).toBe(200);
    const perms = [
      { id: readId, name: "docs.read", slug: "docs.read", description: "Read docs" },
      { id: writeId, name: "docs.write", slug: "docs.write" },
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: { id: roleId, name: "Docs.Editor", description: "Edits docs", permissions: perms } });
  });

  test("by name, ignoring case", async () => {
    expect((await get({ role: "docs.EDITOR" })).body.data.id).toBe(roleId);
  });

  test("a role without permissions or description leaves both out", async () => {
    const id = await createRole(h, "bare-role");
    expect((await get({ role: id })).body.data).toEqual({ id, name: "bare-role" });
  });

  test("`rbac.*.read_role` alone is enough", async () => {
    expect((await get({ role: roleId }, h.rootKeyWith(["rbac.*.read_role"]))).status).toBe(200);
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
    expectInvalid(h, await get({ role: roleId, name: "x" }), "body.name");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await get({ role: roleId }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_role; the detail names it", async () => {
    const res = await get({ role: roleId }, h.rootKeyWith(allGrantsExcept("rbac.*.read_role")));
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'rbac.*.read_role'");
  });
});

describe("404", () => {
  test("unknown id or name", async () => {
    expectError(h, await get({ role: "role_doesnotexist" }), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await get({ role: "Nobody" }), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("a role of another workspace, by id or name", async () => {
    const foreign = otherWorkspaceRootKey(h, "other");
    expectError(h, await get({ role: roleId }, foreign), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await get({ role: "Docs.Editor" }, foreign), 404, ROLE_NOT_FOUND, NOT_FOUND_DETAIL);
  });
});
