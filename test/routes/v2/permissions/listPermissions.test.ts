import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectInvalid, otherWorkspaceRootKey } from "../../../support/contract.ts";
import { describeListing, listedIds as ids, workspaceWith, type Listed } from "./listing.ts";
import { createPermission } from "./support.ts";

const h = routeContract("/v2/permissions.listPermissions");
const list = h.call;
const permissions: Listed = {
  noun: "permissions",
  create: (h, slug, key) => createPermission(h, slug, {}, key),
  grant: "rbac.*.read_permission",
};

describeListing(h, permissions);

describe("200", () => {
  test("items are permission records, description left out when there is none", async () => {
    const key = await otherWorkspaceRootKey(h, "shapes");
    const a = await createPermission(h, "a.read", { name: "A", description: "about a" }, key);
    const b = await createPermission(h, "b.read", {}, key);
    const res = await list({}, key);
    expect(res.body.data).toEqual([
      { id: a, name: "A", slug: "a.read", description: "about a" },
      { id: b, name: "b.read", slug: "b.read" },
    ].sort((x, y) => (x.id < y.id ? -1 : 1)));
  });

  test("a page ending exactly at the last permission has no cursor; an empty cursor starts at the beginning", async () => {
    const w = await workspaceWith(h, permissions, "exact", ["e1", "e2"]);
    const res = await list({ limit: 2, cursor: "" }, w.key);
    expect(ids(res)).toEqual(w.ids);
    expect(res.body.pagination).toEqual({ hasMore: false });
  });

  test("search: case-insensitive substring of name, slug or description; `%` and `_` are literal", async () => {
    const key = await otherWorkspaceRootKey(h, "search");
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
  test("limit not an integer", async () => {
    expectInvalid(h, await list({ limit: 1.5 }), "body.limit");
  });

  test("cursor longer than 1024", async () => {
    expectInvalid(h, await list({ cursor: "c".repeat(1025) }), "body.cursor");
  });

  test("unknown field", async () => {
    expectInvalid(h, await list({ apiId: "api_1" }), "body.apiId");
  });
});
