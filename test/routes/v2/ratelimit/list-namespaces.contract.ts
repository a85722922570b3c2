/**
 * The `listNamespaces` contract (a tollgate addition). Paging, search and grants are the same in
 * both families; the page's shape is each family's listOverrides shape: `ratelimit` answers
 * `data: [...]` + `pagination {cursor?, hasMore}`, `ratelimits` `data: {namespaces, cursor?}`.
 * Each test makes its namespaces in a workspace of its own, so none sees another's.
 */
import { describe, expect, test } from "bun:test";
import { expectError, expectInvalid, INSUFFICIENT, otherWorkspaceRootKey } from "../../../support/contract.ts";
import type { ApiResponse, Harness } from "../../../support/harness.ts";
import { missingPermission, routeContract } from "../../../support/route-contract.ts";
import { type Family, namespaceId, path, readFamilyPage } from "./support.ts";

interface Namespace { id: string; name: string; createdAt: number }

const readPage = (family: Family, res: ApiResponse) => readFamilyPage<Namespace>(family, res, "namespaces");

const idsOf = (page: { items: Namespace[] }) => page.items.map((n) => n.id);

/** A new workspace with a namespace for each of `names` (made by their first limit); its full key and the namespaces' ids by name. */
async function workspaceWith(h: Harness, workspace: string, names: string[]): Promise<{ key: string; ids: Map<string, string> }> {
  const key = await otherWorkspaceRootKey(h, workspace);
  const ids = new Map<string, string>();
  for (const name of names) {
    const res = await h.post("/v2/ratelimit.limit", { namespace: name, identifier: "first", limit: 1, duration: 1000 }, { key });
    expect(res.status).toBe(200);
    ids.set(name, (await namespaceId(h, name, workspace))!);
  }
  return { key, ids };
}

export function listNamespacesContract(family: Family): void {
  const h = routeContract(path(family, "listNamespaces"));
  const list = h.call;

  describe("200", () => {
    test("each live namespace by id with its name and creation time; deleted ones left out; `{}` and no body alike", async () => {
      const { key, ids } = await workspaceWith(h, "every", ["orders", "search", "gone"]);
      await h.records.run("UPDATE ratelimit_namespaces SET deleted_at = ? WHERE id = ?", h.clock.now(), ids.get("gone")!);
      const page = readPage(family, await list({}, key));
      expect(page.items).toEqual(["orders", "search"].map((name) => ({ id: ids.get(name)!, name, createdAt: h.clock.now() })).toSorted((a, b) => (a.id < b.id ? -1 : 1)));
      expect(page.cursor).toBeUndefined();
      expect(readPage(family, await list("", key))).toEqual(page);
    });

    test("a workspace without namespaces: an empty page, no cursor", async () => {
      const { key } = await workspaceWith(h, "empty", []);
      expect(readPage(family, await list({}, key))).toEqual({ items: [], cursor: undefined });
    });

    test("pages: limit and cursor walk the list without gaps or repeats", async () => {
      const { key, ids } = await workspaceWith(h, "paged", ["a", "b", "c", "d", "e"]);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = readPage(family, await list({ limit: 2, ...(cursor ? { cursor } : {}) }, key));
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...idsOf(page));
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(seen).toEqual([...ids.values()].toSorted());
    });

    test("search: a case-insensitive substring of the name or the id; `_` matches only itself", async () => {
      const { key, ids } = await workspaceWith(h, "searched", ["billing", "Billing-EU", "per_user", "perxuser"]);
      const names = async (search: string) => readPage(family, await list({ search }, key)).items.map((n) => n.name).toSorted();
      expect(await names("BILLING")).toEqual(["Billing-EU", "billing"]);
      expect(await names("r_u")).toEqual(["per_user"]);
      expect(await names(ids.get("perxuser")!)).toEqual(["perxuser"]);
    });

    test("a key holding read_override on some namespaces sees those only", async () => {
      const { ids } = await workspaceWith(h, "scoped", ["one", "two", "three"]);
      const grant = (name: string) => `ratelimit.${ids.get(name)}.read_override`;
      expect(idsOf(readPage(family, await list({}, await h.rootKeyWith([grant("two")], "scoped"))))).toEqual([ids.get("two")!]);
      const two = await h.rootKeyWith([grant("one"), grant("three"), "ratelimit.*.limit"], "scoped");
      expect(idsOf(readPage(family, await list({}, two)))).toEqual([ids.get("one")!, ids.get("three")!].toSorted());
    });

    test("another workspace's namespaces are never shown, even of the same name", async () => {
      const mine = await workspaceWith(h, "mine", ["shared", "only-mine"]);
      const theirs = await workspaceWith(h, "theirs", ["shared"]);
      expect(idsOf(readPage(family, await list({}, theirs.key)))).toEqual([theirs.ids.get("shared")!]);
      expect(readPage(family, await list({ search: "only" }, theirs.key)).items).toEqual([]);
      const scopedToMine = await h.rootKeyWith([`ratelimit.${mine.ids.get("shared")}.read_override`], "theirs");
      expect(readPage(family, await list({}, scopedToMine)).items).toEqual([]);
    });
  });

  describe("400", () => {
    test("limit 0 and limit 101, an unknown field, a body that is not an object", async () => {
      expectInvalid(h, await list({ limit: 0 }), "body.limit");
      expectInvalid(h, await list({ limit: 101 }), "body.limit");
      expectInvalid(h, await list({ namespace: "x" }), "body.namespace");
      expectError(h, await list([]), 400, "service/application/invalid_input");
    });
  });

  describe("403", () => {
    test("without `ratelimit.*.read_override`", async () => {
      await h.expectDeniedWithout("ratelimit.*.read_override", {});
    });

    test("a key with other grants on a namespace but no read_override anywhere", async () => {
      const { ids } = await workspaceWith(h, "denied", ["x"]);
      const key = await h.rootKeyWith([`ratelimit.${ids.get("x")}.set_override`, "ratelimit.*.limit", "audit.*.read_log"], "denied");
      expectError(h, await list({}, key), 403, INSUFFICIENT, missingPermission("ratelimit.*.read_override"));
    });
  });
}
