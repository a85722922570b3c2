/**
 * Every list route under a small page byte budget (TOLLGATE_LIST_PAGE_BYTES): a page ends early when
 * its items would pass the budget, always holds at least one item, answers the cursor (and
 * `hasMore`), and following the cursors gives every item exactly once. Records are made in a fresh
 * workspace per test, so each listing holds only its own.
 */
import { describe, expect, test } from "bun:test";
import { testServer } from "../../support/route-contract.ts";
import { createApi, createKey, otherWorkspaceRootKey } from "../../support/contract.ts";

const BUDGET = 4096;
const h = testServer({ env: { TOLLGATE_LIST_PAGE_BYTES: String(BUDGET) } });

/** One page as the route family answers it: its items and the next page's cursor. */
interface Answer {
  items: unknown[];
  cursor: string | undefined;
}

/** The `pagination` family: `data` is the page. */
function paged(body: any): Answer {
  expect(body.pagination.hasMore).toBe(body.pagination.cursor !== undefined);
  return { items: body.data, cursor: body.pagination.cursor };
}

/** Follows the cursors of `path` from the first page; every page but a one-item one within the budget. */
async function walk(key: string, path: string, body: Record<string, unknown>, read: (body: any) => Answer): Promise<{ pages: unknown[][]; items: unknown[] }> {
  const pages: unknown[][] = [];
  let cursor: string | undefined;
  do {
    const res = await h.post(path, { ...body, ...(cursor === undefined ? {} : { cursor }) }, { key });
    expect(res.status).toBe(200);
    const page = read(res.body);
    expect(page.items.length).toBeGreaterThan(0);
    if (page.items.length > 1) expect(Buffer.byteLength(JSON.stringify(page.items))).toBeLessThanOrEqual(BUDGET);
    pages.push(page.items);
    cursor = page.cursor;
    if (pages.length > 200) throw new Error("the cursors do not end");
  } while (cursor !== undefined);
  return { pages, items: pages.flat() };
}

/** Every id once, in the order created ones sort in, over more than one page. */
function expectEachOnce(walked: { pages: unknown[][]; items: unknown[] }, idOf: (item: any) => string, expected: string[]): void {
  expect(walked.pages.length).toBeGreaterThan(1);
  expect(walked.items.map(idOf)).toEqual([...expected].sort());
}

const filler = (bytes: number) => "x".repeat(bytes);

describe("identities.listIdentities", () => {
  test("pages end at the byte budget, an identity over it alone stands on its own page, and the cursors give each identity once", async () => {
    const key = await otherWorkspaceRootKey(h, "bytes-identities");
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const meta = i === 5 ? { big: filler(3 * BUDGET) } : i % 3 === 0 ? {} : { blob: filler(1500) };
      const res = await h.post("/v2/identities.createIdentity", { externalId: `user_${i}`, meta }, { key });
      ids.push(res.body.data.identityId);
    }
    const walked = await walk(key, "/v2/identities.listIdentities", { limit: 100 }, paged);
    expectEachOnce(walked, (i) => i.id, ids);
    const big = walked.pages.find((page) => page.some((i: any) => i.externalId === "user_5"));
    expect(big).toHaveLength(1);
    expect((big?.[0] as any).meta.big).toHaveLength(3 * BUDGET);
  });

  test("`limit` still bounds a page of small identities, and a search pages within the budget too", async () => {
    const key = await otherWorkspaceRootKey(h, "bytes-identities-small");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.post("/v2/identities.createIdentity", { externalId: `s_${i}`, meta: { blob: filler(1500) } }, { key })).body.data.identityId);
    expectEachOnce(await walk(key, "/v2/identities.listIdentities", { limit: 1 }, paged), (i) => i.id, ids);
    expectEachOnce(await walk(key, "/v2/identities.listIdentities", { search: "s_" }, paged), (i) => i.id, ids);
  });
});

describe("apis.listKeys", () => {
  test("a key's meta and its identity's both count, and the cursors give each key once", async () => {
    const key = await otherWorkspaceRootKey(h, "bytes-keys");
    const apiId = await createApi(h, "bytes-keys-api", key);
    await h.post("/v2/identities.createIdentity", { externalId: "heavy", meta: { blob: filler(2500) } }, { key });
    const keyIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const body = { apiId, ...(i % 2 === 0 ? { meta: { blob: filler(1200) } } : { externalId: "heavy" }) };
      keyIds.push((await createKey(h, body, key)).keyId);
    }
    const walked = await walk(key, "/v2/apis.listKeys", { apiId }, paged);
    expectEachOnce(walked, (k) => k.keyId, keyIds);
    expect(walked.items.filter((k: any) => k.identity?.meta?.blob?.length === 2500)).toHaveLength(4);
    const heavyOnly = await walk(key, "/v2/apis.listKeys", { apiId, externalId: "heavy" }, paged);
    expectEachOnce(heavyOnly, (k) => k.keyId, keyIds.filter((_, i) => i % 2 === 1));
  });
});

describe("permissions.listPermissions and listRoles", () => {
  test("permissions with long descriptions and roles holding them page by bytes, each once", async () => {
    const key = await otherWorkspaceRootKey(h, "bytes-rbac");
    const permissionIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await h.post("/v2/permissions.createPermission", { name: `p.${i}`, slug: `p.${i}`, description: filler(500) }, { key });
      permissionIds.push(res.body.data.permissionId);
    }
    const roleIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await h.post("/v2/permissions.createRole", { name: `r${i}`, permissions: [`p.${i}`, `p.${i + 1}`, `p.${i + 2}`] }, { key });
      roleIds.push(res.body.data.roleId);
    }
    expectEachOnce(await walk(key, "/v2/permissions.listPermissions", {}, paged), (p) => p.id, permissionIds);
    expectEachOnce(await walk(key, "/v2/permissions.listRoles", {}, paged), (r) => r.id, roleIds);
  });
});

describe("audit.listLogs", () => {
  test("entries page by bytes, newest first, each once", async () => {
    const key = await otherWorkspaceRootKey(h, "bytes-audit");
    for (let i = 0; i < 30; i++) await h.post("/v2/permissions.createPermission", { name: `audit.${i}.${filler(200)}`, slug: `audit.${i}` }, { key });
    const oneByOne = await walk(key, "/v2/audit.listLogs", { limit: 1 }, paged);
    expect(oneByOne.items.length).toBeGreaterThanOrEqual(30);
    const walked = await walk(key, "/v2/audit.listLogs", { limit: 100 }, paged);
    expect(walked.pages.length).toBeGreaterThan(1);
    expect(walked.items.map((e: any) => e.logId)).toEqual(oneByOne.items.map((e: any) => e.logId));
  });
});

describe("ratelimit overrides and namespaces", () => {
  test("both families' overrides and namespaces page by bytes, each once", async () => {
    const key = await otherWorkspaceRootKey(h, "bytes-ratelimit");
    for (const n of [0, 1]) {
      expect((await h.post("/v2/ratelimit.limit", { namespace: `${n}_${filler(480)}`, identifier: "first", limit: 5, duration: 60_000 }, { key })).status).toBe(200);
    }
    const identifiers: string[] = [];
    for (let i = 0; i < 24; i++) {
      const identifier = `${i}_${filler(480)}`;
      const res = await h.post("/v2/ratelimit.setOverride", { namespace: `${i % 2}_${filler(480)}`, identifier, limit: 5, duration: 60_000 }, { key });
      expect(res.status).toBe(200);
      identifiers.push(identifier);
    }
    const namespace = `0_${filler(480)}`;
    const mine = identifiers.filter((id) => Number(id.split("_")[0]) % 2 === 0);
    const singular = await walk(key, "/v2/ratelimit.listOverrides", { namespace, limit: 100 }, paged);
    expect(singular.pages.length).toBeGreaterThan(1);
    expect(singular.items.map((o: any) => o.identifier).sort()).toEqual([...mine].sort());
    const spec = await walk(key, "/v2/ratelimits.listOverrides", { namespace, limit: 100 }, (body) => ({ items: body.data.overrides, cursor: body.data.cursor }));
    expect(spec.pages.length).toBeGreaterThan(1);
    expect(spec.items.map((o: any) => o.identifier).sort()).toEqual([...mine].sort());
    const spaces = await walk(key, "/v2/ratelimits.listNamespaces", {}, (body) => ({ items: body.data.namespaces, cursor: body.data.cursor }));
    expect(spaces.items.map((n: any) => n.name).sort()).toEqual([`0_${filler(480)}`, `1_${filler(480)}`]);
  });
});

describe("apis.listApis", () => {
  test("APIs with long names page by bytes, each once", async () => {
    const key = await otherWorkspaceRootKey(h, "bytes-apis");
    const apiIds: string[] = [];
    for (let i = 0; i < 20; i++) apiIds.push(await createApi(h, `${i}_${filler(250)}`, key));
    expectEachOnce(await walk(key, "/v2/apis.listApis", {}, paged), (a) => a.id, apiIds);
  });
});
