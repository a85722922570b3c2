import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { createRole, REQUEST_ID } from "./support.ts";

const h = routeContract("/v2/permissions.listRoles");

const list = h.call;
const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((r) => r.id);

/** A fresh workspace with roles of these names: its root key and the ids sorted. */
async function workspaceWith(name: string, roleNames: string[]): Promise<{ key: string; ids: string[] }> {
  const key = otherWorkspaceRootKey(h, name);
  const created: string[] = [];
  for (const roleName of roleNames) created.push(await createRole(h, roleName, [], key));
  return { key, ids: created.sort() };
}

describe("200", () => {
  test("an empty body `{}` is accepted; no roles gives [] and {hasMore:false}", async () => {
    const { key } = await workspaceWith("empty", []);
    const res = await list({}, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: [], pagination: { hasMore: false } });
  });

  test("a request without any body lists the first page, like `{}`", async () => {
    const { key, ids: expected } = await workspaceWith("bodiless", ["bodiless.roles"]);
    for (const body of ["", "{}"]) {
      const res = await list(body, key);
      expect({ status: res.status, ids: res.body.data.map((r: { id: string }) => r.id) }).toEqual({ status: 200, ids: expected });
    }
  });

  test("each role includes its permissions; one without any leaves the field out", async () => {
    const key = otherWorkspaceRootKey(h, "shapes");
    const admin = await createRole(h, "admin", ["all.read", "all.write"], key);
    const empty = await createRole(h, "nobody", [], key);
    const res = await list({}, key);
    const byId = new Map(res.body.data.map((r: { id: string }) => [r.id, r]));
    expect(byId.get(empty)).toEqual({ id: empty, name: "nobody" });
    const perm = async (slug: string) => (await h.post("/v2/permissions.getPermission", { permission: slug }, { key })).body.data;
    const read = await perm("all.read");
    const perms = [read, await perm("all.write")].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(read).toEqual({ id: expect.stringMatching(/^perm_/), name: "all.read", slug: "all.read", description: "Auto-created permission: all.read" });
    expect(byId.get(admin)).toEqual({ id: admin, name: "admin", permissions: perms });
  });

  test("pages by id; the cursor is the first id of the next page and is left out on the last page", async () => {
    const w = await workspaceWith("paging", ["r1", "r2", "r3", "r4", "r5"]);
    const p1 = await list({ limit: 2 }, w.key);
    expect(ids(p1)).toEqual(w.ids.slice(0, 2));
    expect(p1.body.pagination).toEqual({ cursor: w.ids[2], hasMore: true });
    const p2 = await list({ limit: 2, cursor: p1.body.pagination.cursor }, w.key);
    expect(ids(p2)).toEqual(w.ids.slice(2, 4));
    expect(p2.body.pagination).toEqual({ cursor: w.ids[4], hasMore: true });
    const p3 = await list({ limit: 2, cursor: p2.body.pagination.cursor }, w.key);
    expect(ids(p3)).toEqual(w.ids.slice(4));
    expect(p3.body.pagination).toEqual({ hasMore: false });
    expect("cursor" in p3.body.pagination).toBe(false);
  });

  test("limit defaults to 100", async () => {
    const w = await workspaceWith("bulk", Array.from({ length: 101 }, (_, i) => `bulk-${i}`));
    const p1 = await list({}, w.key);
    expect(p1.body.data.length).toBe(100);
    expect(p1.body.pagination).toEqual({ cursor: w.ids[100], hasMore: true });
    const p2 = await list({ cursor: p1.body.pagination.cursor }, w.key);
    expect(ids(p2)).toEqual([w.ids[100] as string]);
    expect(p2.body.pagination).toEqual({ hasMore: false });
  });

  test("lists only the root key's workspace", async () => {
    const a = await workspaceWith("mine", ["mine-1"]);
    await workspaceWith("theirs", ["theirs-1", "theirs-2"]);
    expect(ids(await list({}, a.key))).toEqual(a.ids);
  });

  test("search: case-insensitive substring of name or description", async () => {
    const key = otherWorkspaceRootKey(h, "search");
    const named = await createRole(h, "Support.Agent", [], key);
    const described = (await h.post("/v2/permissions.createRole", { name: "helpdesk", description: "first-line SUPPORT" }, { key })).body.data.roleId;
    await createRole(h, "billing", [], key);
    expect(ids(await list({ search: "support" }, key)).sort()).toEqual([named, described].sort());
  });
});

describe("400", () => {
  test("limit 0", async () => {
    expectInvalid(h, await list({ limit: 0 }), "body.limit");
  });

  test("limit 101", async () => {
    expectInvalid(h, await list({ limit: 101 }), "body.limit");
  });

  test("search longer than 256", async () => {
    expectInvalid(h, await list({ search: "s".repeat(257) }), "body.search");
  });

  test("unknown field", async () => {
    expectInvalid(h, await list({ name: "x" }), "body.name");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await list({}, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_role; the detail names it", async () => {
    await h.expectDeniedWithout("rbac.*.read_role", {});
  });
});
