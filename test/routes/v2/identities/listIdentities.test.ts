import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, expectMissingOneOf, INSUFFICIENT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import { createIdentity, RATELIMIT_ID, REQUEST_ID } from "./support.ts";

const PATH = "/v2/identities.listIdentities";
const h = routeContract(PATH);
const WILDCARD_DETAIL = "Missing permission: 'identity.*.read_identity'";
const ONE_OF = ["identity.*.read_identity", "identity.<identityId>.read_identity"];

/** A fresh workspace (so listings are not mixed with other tests) with a full root key and `externalIds` created in it. */
async function workspaceWith(name: string, externalIds: string[]): Promise<{ key: string; ids: string[] }> {
  const key = await otherWorkspaceRootKey(h, name);
  const ids: string[] = [];
  for (const externalId of externalIds) ids.push(await createIdentity(h, externalId, {}, key));
  return { key, ids: ids.sort() };
}

const list = async (key: string, body: Record<string, unknown> = {}) => h.post(PATH, body, { key });

describe("200", () => {
  test("a request without any body lists the first page, like `{}`", async () => {
    const { key, ids: expected } = await workspaceWith("ws-bodiless", ["user_bodiless"]);
    for (const body of ["", "{}"]) {
      const res = await h.post(PATH, body, { key });
      expect({ status: res.status, ids: res.body.data.map((r: { id: string }) => r.id) }).toEqual({ status: 200, ids: expected });
    }
  });

  test("every live identity, full Identity objects sorted by id, pagination {hasMore:false} without cursor", async () => {
    const key = await otherWorkspaceRootKey(h, "ws-list-full");
    const a = await createIdentity(h, "user_a", { meta: { n: 1 }, ratelimits: [{ name: "req", limit: 5, duration: 1000 }] }, key);
    const b = await createIdentity(h, "user_b", {}, key);
    const res = await list(key);
    expect(res.status).toBe(200);
    const expected = [
      { id: a, externalId: "user_a", meta: { n: 1 }, ratelimits: [{ id: RATELIMIT_ID, name: "req", limit: 5, duration: 1000, autoApply: false }] },
      { id: b, externalId: "user_b", meta: {}, ratelimits: [] },
    ].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(res.body).toEqual({ meta: { requestId: REQUEST_ID }, data: expected, pagination: { hasMore: false } });
  });

  test("pages of `limit`: cursor is the id of the next page's first row, left out on the last page", async () => {
    const { key, ids } = await workspaceWith("ws-list-pages", ["p1", "p2", "p3", "p4", "p5"]);
    const first = await list(key, { limit: 2 });
    expect(first.body.data.map((i: { id: string }) => i.id)).toEqual(ids.slice(0, 2));
    expect(first.body.pagination).toEqual({ cursor: ids[2], hasMore: true });
    const second = await list(key, { limit: 2, cursor: first.body.pagination.cursor });
    expect(second.body.data.map((i: { id: string }) => i.id)).toEqual(ids.slice(2, 4));
    expect(second.body.pagination).toEqual({ cursor: ids[4], hasMore: true });
    const last = await list(key, { limit: 2, cursor: second.body.pagination.cursor });
    expect(last.body.data.map((i: { id: string }) => i.id)).toEqual(ids.slice(4));
    expect(last.body.pagination).toEqual({ hasMore: false });
  });

  test("a page that exactly fills `limit` with nothing after it has no cursor", async () => {
    const { key } = await workspaceWith("ws-list-exact", ["e1", "e2"]);
    expect((await list(key, { limit: 2 })).body.pagination).toEqual({ hasMore: false });
  });

  test("default limit is 100", async () => {
    const key = await otherWorkspaceRootKey(h, "ws-list-default");
    for (let i = 0; i < 101; i++) await createIdentity(h, `bulk_${i}`, {}, key);
    const res = await list(key);
    expect(res.body.data.length).toBe(100);
    expect(res.body.pagination.hasMore).toBe(true);
  });

  test("deleted identities are left out", async () => {
    const { key, ids } = await workspaceWith("ws-list-deleted", ["keep", "drop"]);
    await h.post("/v2/identities.deleteIdentity", { identity: "drop" }, { key });
    const res = await list(key);
    expect(res.body.data.map((i: { externalId: string }) => i.externalId)).toEqual(["keep"]);
    expect(ids).toContain(res.body.data[0].id);
  });

  test("search: case-insensitive substring of the externalId or the id; `%` and `_` are literal; blank matches all", async () => {
    const { key, ids } = await workspaceWith("ws-list-search", ["Alice.Smith", "bob_jones", "bobxjones", "carol"]);
    const names = async (search: string) => (await list(key, { search })).body.data.map((i: { externalId: string }) => i.externalId).sort();
    expect(await names("alice")).toEqual(["Alice.Smith"]);
    expect(await names("BOB")).toEqual(["bob_jones", "bobxjones"]);
    expect(await names("b_j")).toEqual(["bob_jones"]);
    expect(await names("%")).toEqual([]);
    expect(await names("   ")).toEqual(["Alice.Smith", "bob_jones", "bobxjones", "carol"]);
    expect(await names("nobody")).toEqual([]);
    const byId = await list(key, { search: ids[0]!.slice(3).toLowerCase() });
    expect(byId.body.data.map((i: { id: string }) => i.id)).toContain(ids[0]);
  });

  test("another workspace's identities are never listed", async () => {
    const { key } = await workspaceWith("ws-list-a", ["only_a"]);
    await workspaceWith("ws-list-b", ["only_b"]);
    expect((await list(key)).body.data.map((i: { externalId: string }) => i.externalId)).toEqual(["only_a"]);
  });

  test("per-identity grants suffice when they cover every row of the page", async () => {
    const { ids } = await workspaceWith("ws-list-scoped", ["s1", "s2"]);
    const key = await h.rootKeyWith(ids.map((id) => `identity.${id}.read_identity`), "ws-list-scoped");
    expect((await list(key)).body.data.length).toBe(2);
  });
});

describe("400", () => {
  test("limit outside 1..100 or not an integer", async () => {
    expectInvalid(h, await h.post(PATH, { limit: 0 }), "body.limit");
    expectInvalid(h, await h.post(PATH, { limit: 101 }), "body.limit");
    expectInvalid(h, await h.post(PATH, { limit: 1.5 }), "body.limit");
    expectInvalid(h, await h.post(PATH, { limit: "10" }), "body.limit");
  });

  test("search longer than 256, empty cursor, unknown field", async () => {
    expectInvalid(h, await h.post(PATH, { search: "s".repeat(257) }), "body.search");
    expectInvalid(h, await h.post(PATH, { cursor: "" }), "body.cursor");
    expectInvalid(h, await h.post(PATH, { environment: "x" }), "body.environment");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post(PATH, {}, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("403: Missing one of these permissions without any read_identity grant (upstream v2_identities_list_identities 403_test 'no permission to read any identity')", async () => {
    await workspaceWith("ws-list-denied", ["d1"]);
    const key = await h.rootKeyWith(["identity.*.create_identity"], "ws-list-denied");
    expectMissingOneOf(h, await list(key), ONE_OF, ["identity.*.create_identity"]);
  });

  test("a per-identity grant that does not cover every row of the page: the rows it may not read are not named", async () => {
    const { ids } = await workspaceWith("ws-list-partial", ["q1", "q2"]);
    const key = await h.rootKeyWith([`identity.${ids[0]}.read_identity`], "ws-list-partial");
    const res = await list(key);
    expectMissingOneOf(h, res, ONE_OF, [`identity.${ids[0]}.read_identity`]);
    expect(res.body.error.detail).not.toContain(ids[1]);
  });

  test("an empty page without the wildcard grant", async () => {
    await h.running.services.workspaces.create({ name: "ws-list-empty" }, { type: "cli", id: "test" });
    const key = await h.rootKeyWith(["identity.id_123.read_identity"], "ws-list-empty");
    expectError(h, await list(key), 403, INSUFFICIENT, WILDCARD_DETAIL);
  });
});
