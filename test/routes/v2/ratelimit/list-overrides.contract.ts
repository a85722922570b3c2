/**
 * The `listOverrides` contract. Paging is the same in both families; the shape differs
 * (DECISIONS "Paths"): upstream `data: [...]` + `pagination {cursor?, hasMore}`, spec `data: {overrides, cursor?}`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type ApiResponse, type Harness } from "../../../support/harness.ts";
import { allGrantsExcept, expectError, expectInvalid, expectMissingOneOf, INSUFFICIENT } from "../../../support/contract.ts";
import { createNamespace, type Family, insertDeletedNamespace, MINUTE, NS_NOT_FOUND, path, setOverride, uniq, readFamilyPage } from "./support.ts";

interface Override { overrideId: string; identifier: string; limit: number; duration: number }

const readPage = (family: Family, res: ApiResponse) => readFamilyPage<Override>(family, res, "overrides");

export function listOverridesContract(family: Family): void {
  const url = path(family, "listOverrides");
  let h: Harness;
  let ns: string;
  let nsId: string;
  const created: Override[] = [];
  beforeAll(async () => {
    h = await startHarness();
    ns = uniq("ns");
    nsId = await createNamespace(h, ns);
    for (let i = 0; i < 51; i++) {
      const identifier = `user_${i}`;
      created.push({ overrideId: await setOverride(h, ns, identifier, i), identifier, limit: i, duration: MINUTE });
    }
  });
  afterAll(async () => { await h.stop(); });

  const sorted = () => [...created].sort((a, b) => (a.overrideId < b.overrideId ? -1 : 1));

  describe("200", () => {
    test("default page of 50, by id ascending; the cursor leads to the rest; the last page has no cursor", async () => {
      const first = readPage(family, await h.post(url, { namespace: ns }));
      expect(first.items).toEqual(sorted().slice(0, 50));
      expect(first.cursor).toBe(sorted()[50]!.overrideId);
      const second = readPage(family, await h.post(url, { namespace: ns, cursor: first.cursor }));
      expect(second.items).toEqual(sorted().slice(50));
      expect(second.cursor).toBeUndefined();
    });

    test("paging with limit 20 visits every override once", async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = readPage(family, await h.post(url, { namespace: nsId, limit: 20, ...(cursor ? { cursor } : {}) }));
        expect(page.items.length).toBeLessThanOrEqual(20);
        seen.push(...page.items.map((o) => o.overrideId));
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(seen).toEqual(sorted().map((o) => o.overrideId));
    });

    test("limit 100 returns everything on one page", async () => {
      const page = readPage(family, await h.post(url, { namespace: ns, limit: 100 }));
      expect(page.items).toHaveLength(51);
      expect(page.cursor).toBeUndefined();
    });

    test("an empty namespace: no overrides, no cursor; deleted overrides are not listed", async () => {
      const empty = uniq("ns");
      await createNamespace(h, empty);
      expect(readPage(family, await h.post(url, { namespace: empty }))).toEqual({ items: [], cursor: undefined });
      await setOverride(h, empty, "temp", 1);
      await h.post("/v2/ratelimit.deleteOverride", { namespace: empty, identifier: "temp" });
      expect(readPage(family, await h.post(url, { namespace: empty })).items).toEqual([]);
    });
  });

  describe("400", () => {
    test("limit 0 and limit 101", async () => {
      expectInvalid(h, await h.post(url, { namespace: ns, limit: 0 }), "body.limit");
      expectInvalid(h, await h.post(url, { namespace: ns, limit: 101 }), "body.limit");
    });

    test("missing namespace", async () => {
      expectInvalid(h, await h.post(url, {}), "body.namespace");
    });
  });

  describe("403", () => {
    test("without `read_override`", async () => {
      const res = await h.post(url, { namespace: ns }, { key: await h.rootKeyWith(allGrantsExcept("ratelimit.*.read_override")) });
      expectMissingOneOf(h, res, ["ratelimit.*.read_override", `ratelimit.${nsId}.read_override`], allGrantsExcept("ratelimit.*.read_override"));
    });
  });

  describe("404", () => {
    test("an unknown or deleted namespace", async () => {
      expectError(h, await h.post(url, { namespace: uniq("ns") }), 404, NS_NOT_FOUND);
      const gone = uniq("gone");
      await insertDeletedNamespace(h, gone);
      expectError(h, await h.post(url, { namespace: gone }), 404, NS_NOT_FOUND);
    });
  });
}
