import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { createPermission, REQUEST_ID } from "./support.ts";

const h = routeContract("/v2/permissions.listPermissions");

const list = h.call;
const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((p) => p.id);

/** A fresh workspace with `slugs` as permissions: its root key and the ids sorted. */
async function workspaceWith(name: string, slugs: string[]): Promise<{ key: string; ids: string[] }> {
  const key = otherWorkspaceRootKey(h, name);
  const created: string[] = [];
  for (const slug of slugs) created.push(await createPermission(h, slug, {}, key));
  return { key, ids: created.sort() };
}

describe("200", () => {
  test("an empty body `{}` is accepted; no permissions gives [] and {hasMore:false}", async () => {
    const { key } = await workspaceWith("empty", []);
    const res = await list({}, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: [], pagination: { hasMore: false } });
  });

  test("a request without any body lists the first page, like `{}`", async () => {
    const { key, ids: expected } = await workspaceWith("bodiless", ["bodiless.permissions"]);
    for (const body of ["", "{}"]) {
      const res = await list(body, key);
      expect({ status: res.status, ids: res.body.data.map((r: { id: string }) => r.id) }).toEqual({ status: 200, ids: expected });
    }
  });

  test("items are permission records, description left out when there is none", async () => {
    const key = otherWorkspaceRootKey(h, "shapes");
    const a = await createPermission(h, "a.read", { name: "A", description: "about a" }, key);
    const b = await createPermission(h, "b.read", {}, key);
    const res = await list({}, key);
    expect(res.body.data).toEqual([
      { id: a, name: "A", slug: "a.read", description: "about a" },
      { id: b, name: "b.read", slug: "b.read" },
    ].sort((x, y) => (x.id < y.id ? -1 : 1)));
  });

  test("pages by id; the cursor is the first id of the next page and is left out on the last page", async () => {
    const w = await workspaceWith("paging", ["p1", "p2", "p3", "p4", "p5"]);
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

  test("a page ending exactly at the last permission has no cursor; an empty cursor starts at the beginning", async () => {
    const w = await workspaceWith("exact", ["e1", "e2"]);
    const res = await list({ limit: 2, cursor: "" }, w.key);
    expect(ids(res)).toEqual(w.ids);
    expect(res.body.pagination).toEqual({ hasMore: false });
  });

  test("limit defaults to 100", async () => {
    const slugs = Array.from({ length: 101 }, (_, i) => `bulk.${i}`);
    const w = await workspaceWith("bulk", slugs);
    const p1 = await list({}, w.key);
    expect(p1.body.data.length).toBe(100);
    expect(p1.body.pagination).toEqual({ cursor: w.ids[100], hasMore: true });
    const p2 = await list({ cursor: p1.body.pagination.cursor }, w.key);
    expect(ids(p2)).toEqual([w.ids[100] as string]);
    expect(p2.body.pagination).toEqual({ hasMore: false });
  });

  test("lists only the root key's workspace", async () => {
    const a = await workspaceWith("mine", ["m.one"]);
    await workspaceWith("theirs", ["t.one", "t.two"]);
    expect(ids(await list({}, a.key))).toEqual(a.ids);
  });

  test("search: case-insensitive substring of name, slug or description; `%` and `_` are literal", async () => {
    const key = otherWorkspaceRootKey(h, "search");
    const docs = await createPermission(h, "documents.read", {}, key);
    const named = await createPermission(h, "x.1", { name: "All DOCUMENTS" }, key);
    const described = await createPermission(h, "x.2", { description: "for documents" }, key);
    const underscore = await createPermission(h, "under_score", {}, key);
    await createPermission(h, "other", {}, key);
    expect(ids(await list({ search: "Documents" }, key)).sort()).toEqual([docs, named, described].sort());
    expect(ids(await list({ search: "r_s" }, key))).toEqual([underscore]);
    expect(ids(await list({ search: "r%s" }, key))).toEqual([]);
    expect((await list({ search: "   " }, key)).body.data.length).toBe(5);
    expect(ids(await list({ search: docs.toLowerCase() }, key))).toEqual([docs]);
  });
});

describe("400", () => {
  test("limit 0", async () => {
    expectInvalid(h, await list({ limit: 0 }), "body.limit");
  });

  test("limit 101", async () => {
    expectInvalid(h, await list({ limit: 101 }), "body.limit");
  });

  test("limit not an integer", async () => {
    expectInvalid(h, await list({ limit: 1.5 }), "body.limit");
  });

  test("cursor longer than 1024", async () => {
    expectInvalid(h, await list({ cursor: "c".repeat(1025) }), "body.cursor");
  });

  test("search longer than 256", async () => {
    expectInvalid(h, await list({ search: "s".repeat(257) }), "body.search");
  });

  test("unknown field", async () => {
    expectInvalid(h, await list({ apiId: "api_1" }), "body.apiId");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await list({}, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_permission; the detail names it", async () => {
    await h.expectDeniedWithout("rbac.*.read_permission", {});
  });
});
