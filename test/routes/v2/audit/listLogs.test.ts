import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { allGrantsExcept, expectError, expectInvalid, INSUFFICIENT, otherWorkspaceRootKey, TEST_ACTOR } from "../../../support/contract.ts";

const DAY_MS = 86_400_000;

// A fresh instance per test: every test counts the entries of its workspace.
const h = routeContract("/v2/audit.listLogs", { perTest: true });

const list = h.call;

/** Creates `n` APIs, one second apart; returns their ids, oldest first. */
async function createApis(n: number, stem = "api"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    h.clock.advance(1000);
    const res = await h.post("/v2/apis.createApi", { name: `${stem}-${i}` });
    ids.push(res.body.data.apiId);
  }
  return ids;
}

/** Follows cursors the way the SDK does (while `cursor` is a non-empty string); returns every page. */
async function allPages(body: Record<string, unknown>): Promise<any[][]> {
  const pages: any[][] = [];
  let cursor: string | undefined;
  do {
    const res = await list({ ...body, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    pages.push(res.body.data);
    cursor = res.body.pagination.cursor;
    expect(res.body.pagination.hasMore).toBe(cursor !== undefined);
  } while (cursor && pages.length < 100);
  return pages;
}

describe("200", () => {
  test("newest first, with pagination {hasMore:false} and no cursor on the only page", async () => {
    const apis = await createApis(3);
    const res = await list({ event: "api.create" });
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: any) => e.resources[0].id)).toEqual([...apis].reverse());
    expect(res.body.pagination).toEqual({ hasMore: false });
    expect(res.body.data[0]).toMatchObject({ logId: expect.stringMatching(/^log_/), event: "api.create", actor: { type: "root_key" } });
  });

  test("the bootstrap entries of a new data dir are there (actor `system`)", async () => {
    const res = await list({});
    expect(res.body.data.map((e: any) => e.event).sort()).toEqual(["root_key.create", "workspace.create"]);
    expect(res.body.data[0].actor).toEqual({ type: "system", id: "bootstrap", name: "first start" });
  });

  test("pages by `limit` with a cursor; every entry exactly once, in order, also when entries share a time", async () => {
    await createApis(5);
    for (let i = 0; i < 6; i++) await h.post("/v2/apis.createApi", { name: `same-time-${i}` });
    const pages = await allPages({ event: "api.create", limit: 4 });
    expect(pages.map((p) => p.length)).toEqual([4, 4, 3]);
    const entries = pages.flat();
    expect(new Set(entries.map((e) => e.logId)).size).toBe(11);
    const sorted = [...entries].sort((a, b) => b.time - a.time || (a.logId < b.logId ? 1 : -1));
    expect(entries.map((e) => e.logId)).toEqual(sorted.map((e) => e.logId));
  });

  test("the cursor is the logId of the next page's first entry", async () => {
    await createApis(3);
    const first = await list({ event: "api.create", limit: 2 });
    const all = await list({ event: "api.create" });
    expect(first.body.pagination).toEqual({ cursor: all.body.data[2].logId, hasMore: true });
  });

  test("limit defaults to 100", async () => {
    await createApis(101, "many");
    const res = await list({ event: "api.create" });
    expect(res.body.data).toHaveLength(100);
    expect(res.body.pagination.hasMore).toBe(true);
  });

  test("filters: event, actorId, resourceId, since and until (inclusive), combined", async () => {
    const other = await h.running.services.workspaces.createRootKey({ workspace: "default", name: "other", permissions: ["api.*.create_api", "api.*.delete_api"] }, TEST_ACTOR);
    const [a, b] = await createApis(2);
    const start = h.clock.now();
    h.clock.advance(1000);
    await h.post("/v2/apis.deleteApi", { apiId: a }, { key: other.key });
    h.clock.advance(1000);
    const c = (await h.post("/v2/apis.createApi", { name: "by-other" }, { key: other.key })).body.data.apiId;
    const ids = async (body: Record<string, unknown>) => (await list(body)).body.data.map((e: any) => `${e.event}:${e.resources[0].id}`);
    expect(await ids({ event: "api.delete" })).toEqual([`api.delete:${a}`]);
    expect(await ids({ actorId: other.id })).toEqual([`api.create:${c}`, `api.delete:${a}`]);
    expect(await ids({ resourceId: a })).toEqual([`api.delete:${a}`, `api.create:${a}`]);
    expect(await ids({ since: start + 1000 })).toEqual([`api.create:${c}`, `api.delete:${a}`]);
    expect(await ids({ since: start, until: start + 1000 })).toEqual([`api.delete:${a}`, `api.create:${b}`]);
    expect(await ids({ actorId: other.id, event: "api.create" })).toEqual([`api.create:${c}`]);
    expect(await ids({ event: "key.create" })).toEqual([]);
  });

  test("resourceId matches any resource of an entry, not only the first", async () => {
    const created = await h.post("/v2/apis.createApi", { name: "with-space" });
    const entry = (await list({ resourceId: created.body.data.apiId })).body.data[0];
    const keySpaceId = entry.resources[1].id;
    expect((await list({ resourceId: keySpaceId })).body.data.map((e: any) => e.logId)).toEqual([entry.logId]);
  });

  test("only the caller's workspace", async () => {
    await createApis(2);
    const foreign = await otherWorkspaceRootKey(h, "elsewhere");
    await h.post("/v2/apis.createApi", { name: "theirs" }, { key: foreign });
    const theirs = await list({ event: "api.create" }, foreign);
    expect(theirs.body.data).toHaveLength(1);
    expect(theirs.body.data[0].resources[0].name).toBe("theirs");
    expect((await list({ event: "api.create" })).body.data).toHaveLength(2);
  });

  test("entries past retention are left out; an expired cursor gives an empty last page", async () => {
    const [old] = await createApis(2);
    const page = await list({ event: "api.create", limit: 1 });
    h.clock.advance(90 * DAY_MS - 999);
    const now = await list({ event: "api.create" });
    expect(now.body.data.map((e: any) => e.resources[0].id)).not.toContain(old);
    expect(now.body.data).toHaveLength(1);
    h.clock.advance(1000);
    const expired = await list({ event: "api.create", cursor: page.body.pagination.cursor });
    expect(expired.body).toMatchObject({ data: [], pagination: { hasMore: false } });
  });

  test("an unknown cursor, or one of another workspace, gives an empty page", async () => {
    await createApis(2);
    const cursor = (await list({ limit: 1 })).body.pagination.cursor;
    expect((await list({ cursor: "log_unknown" })).body).toMatchObject({ data: [], pagination: { hasMore: false } });
    expect((await list({ cursor }, await otherWorkspaceRootKey(h, "peeker"))).body).toMatchObject({ data: [], pagination: { hasMore: false } });
  });
});

describe("400", () => {
  test.each([0, 101, -1, 1.5])("limit %p", async (limit) => {
    expectInvalid(h, await list({ limit }), "body.limit");
  });

  test("limit as a string", async () => {
    expectInvalid(h, await list({ limit: "5" }), "body.limit");
  });

  test("an empty filter string", async () => {
    expectInvalid(h, await list({ event: "" }), "body.event");
    expectInvalid(h, await list({ actorId: "" }), "body.actorId");
    expectInvalid(h, await list({ resourceId: "" }), "body.resourceId");
  });

  test("since or until not a Unix ms integer", async () => {
    expectInvalid(h, await list({ since: "yesterday" }), "body.since");
    expectInvalid(h, await list({ until: -5 }), "body.until");
  });

  test("an unknown field", async () => {
    expectInvalid(h, await list({ search: "x" }), "body.search");
  });
});

describe("403", () => {
  test("without audit.*.read_log, naming the permission", async () => {
    const res = await list({}, await h.rootKeyWith(allGrantsExcept("audit.*.read_log")));
    expectError(h, res, 403, INSUFFICIENT);
    expect(res.body.error.detail).toContain("'audit.*.read_log'");
  });
});
