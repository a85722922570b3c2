/**
 * The outcomes permissions.listPermissions and permissions.listRoles share: one workspace's records
 * in pages by id, the bodies they accept and refuse. Each record is made in a fresh workspace of
 * its own, so the counts of one test never see another's.
 */
import { describe, expect, test } from "bun:test";
import { expectError, expectInvalid, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import type { ApiResponse, Harness } from "../../../support/harness.ts";
import type { RouteContract } from "../../../support/route-contract.ts";
import { REQUEST_ID } from "./support.ts";

export interface Listed {
  /** What the route lists, plural: "permissions", "roles". */
  noun: string;
  /** Makes one record named `name` with the root key `key`; returns its id. */
  create(h: Harness, name: string, key: string): Promise<string>;
  /** The wildcard grant the route needs. */
  grant: string;
}

export interface ListedWorkspace {
  key: string;
  /** The ids of the records made, sorted. */
  ids: string[];
}

export const listedIds = (res: ApiResponse): string[] => res.body.data.map((r: { id: string }) => r.id);

/** A fresh workspace named `name` with a record for each of `names`. */
export async function workspaceWith(h: Harness, listed: Listed, name: string, names: string[]): Promise<ListedWorkspace> {
  const key = await otherWorkspaceRootKey(h, name);
  const created: string[] = [];
  for (const recordName of names) created.push(await listed.create(h, recordName, key));
  return { key, ids: created.sort() };
}

/** Registers the shared tests in the 200, 400, 401 and 403 groups of the calling file. */
export function describeListing(h: RouteContract, listed: Listed): void {
  const list = h.call;
  const make = (name: string, names: string[]) => workspaceWith(h, listed, name, names);

  describe("200", () => {
    test(`an empty body \`{}\` is accepted; no ${listed.noun} gives [] and {hasMore:false}`, async () => {
      const { key } = await make("empty", []);
      const res = await list({}, key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: [], pagination: { hasMore: false } });
    });

    test("a request without any body lists the first page, like `{}`", async () => {
      const { key, ids: expected } = await make("bodiless", [`bodiless.${listed.noun}`]);
      for (const body of ["", "{}"]) {
        const res = await list(body, key);
        expect({ status: res.status, ids: listedIds(res) }).toEqual({ status: 200, ids: expected });
      }
    });

    test("pages by id; the cursor is the first id of the next page and is left out on the last page", async () => {
      const w = await make("paging", ["p1", "p2", "p3", "p4", "p5"]);
      const p1 = await list({ limit: 2 }, w.key);
      expect(listedIds(p1)).toEqual(w.ids.slice(0, 2));
      expect(p1.body.pagination).toEqual({ cursor: w.ids[2], hasMore: true });
      const p2 = await list({ limit: 2, cursor: p1.body.pagination.cursor }, w.key);
      expect(listedIds(p2)).toEqual(w.ids.slice(2, 4));
      expect(p2.body.pagination).toEqual({ cursor: w.ids[4], hasMore: true });
      const p3 = await list({ limit: 2, cursor: p2.body.pagination.cursor }, w.key);
      expect(listedIds(p3)).toEqual(w.ids.slice(4));
      expect(p3.body.pagination).toEqual({ hasMore: false });
      expect("cursor" in p3.body.pagination).toBe(false);
    });

    test("limit defaults to 100", async () => {
      const w = await make("bulk", Array.from({ length: 101 }, (_, i) => `bulk.${i}`));
      const p1 = await list({}, w.key);
      expect(p1.body.data.length).toBe(100);
      expect(p1.body.pagination).toEqual({ cursor: w.ids[100], hasMore: true });
      const p2 = await list({ cursor: p1.body.pagination.cursor }, w.key);
      expect(listedIds(p2)).toEqual([w.ids[100] as string]);
      expect(p2.body.pagination).toEqual({ hasMore: false });
    });

    test("lists only the root key's workspace", async () => {
      const a = await make("mine", ["m.one"]);
      await make("theirs", ["t.one", "t.two"]);
      expect(listedIds(await list({}, a.key))).toEqual(a.ids);
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
  });

  describe("401", () => {
    test("unknown root key", async () => {
      expectError(h, await list({}, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
    });
  });

  describe("403", () => {
    test(`without ${listed.grant.split(".").pop()}; the detail names it`, async () => {
      await h.expectDeniedWithout(listed.grant, {});
    });
  });
}
