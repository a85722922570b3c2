/**
 * The console's paging against a service whose list pages end at a small byte budget: pages hold
 * fewer items than their limit, and the console follows the cursors, never the page's length.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ApiClient } from "../../src/console/app/api/client.ts";
import { searchOverrides } from "../../src/console/app/api/namespaces.ts";
import { startHarness, type Harness } from "../support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { TOLLGATE_LIST_PAGE_BYTES: "4096" } });
});
afterAll(async () => {
  await h.stop();
});

const clientFor = () => new ApiClient(h.rootKey, (url, init) => fetch(`${h.url}${url}`, init));

test("pages: identities with large metas come over several short pages, each once", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    ids.push((await h.post("/v2/identities.createIdentity", { externalId: `console_${i}`, meta: { blob: "m".repeat(1500) } })).body.data.identityId);
  }
  const pages = [];
  for await (const page of clientFor().pages("identities.listIdentities", { limit: 100, search: "console_" }, 50)) pages.push(page.items);
  expect(pages.length).toBeGreaterThan(1);
  expect(pages[0]!.length).toBeLessThan(10);
  expect(pages.flat().map((i) => i.id)).toEqual([...ids].sort());
});

test("searchOverrides stops at a screenful and carries on from its cursor to the last match", async () => {
  const namespace = "console_search";
  expect((await h.post("/v2/ratelimit.limit", { namespace, identifier: "first", limit: 5, duration: 60_000 })).status).toBe(200);
  const identifiers: string[] = [];
  for (let i = 0; i < 60; i++) {
    const identifier = `match_${String(i).padStart(2, "0")}_${"i".repeat(100)}`;
    expect((await h.post("/v2/ratelimit.setOverride", { namespace, identifier, limit: 5, duration: 60_000 })).status).toBe(200);
    identifiers.push(identifier);
  }
  const first = await searchOverrides(clientFor(), namespace, "MATCH");
  expect(first.items.length).toBeGreaterThanOrEqual(25);
  expect(first.cursor).toBeDefined();
  const rest = await searchOverrides(clientFor(), namespace, "MATCH", first.cursor);
  expect(rest.cursor).toBeUndefined();
  expect([...first.items, ...rest.items].map((o) => o.identifier).sort()).toEqual(identifiers.sort());
});
