import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { API_NOT_FOUND, createApi, createKey, expectError, expectInvalid, INSUFFICIENT, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";

const h = routeContract("/v2/apis.listKeys");

const list = h.call;

async function apiWithKeys(n: number, extra: Record<string, unknown> = {}): Promise<{ apiId: string; ids: string[] }> {
  const apiId = await createApi(h, "listed");
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await createKey(h, { apiId, ...extra })).keyId);
  return { apiId, ids: ids.sort() };
}

describe("200", () => {
  test("an API without keys: [] and pagination {hasMore:false}", async () => {
    const apiId = await createApi(h, "empty");
    const res = await list({ apiId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: expect.stringMatching(/^req_/) }, data: [], pagination: { hasMore: false } });
  });

  test("each item is the key view, optional fields left out", async () => {
    const apiId = await createApi(h, "views");
    const plain = await createKey(h, { apiId });
    const rich = await createKey(h, { apiId, prefix: "lk", name: "rich", meta: { tier: "gold" }, expires: 4102444800000, permissions: ["b.read", "a.write"] });
    const res = await list({ apiId });
    const byId = new Map(res.body.data.map((k: { keyId: string }) => [k.keyId, k]));
    expect(byId.get(plain.keyId)).toEqual({ keyId: plain.keyId, start: plain.key.slice(0, 4), enabled: true, createdAt: h.clock.now() });
    expect(byId.get(rich.keyId)).toEqual({
      keyId: rich.keyId, start: rich.key.slice(0, 7), enabled: true, createdAt: h.clock.now(), name: "rich",
      meta: { tier: "gold" }, expires: 4102444800000, permissions: ["a.write", "b.read"],
    });
    expect(res.body.data.length).toBe(2);
  });

  test("pages by id ascending; cursor is the first id of the next page and is left out on the last page", async () => {
    const { apiId, ids } = await apiWithKeys(5);
    const p1 = await list({ apiId, limit: 2 });
    expect(p1.body.data.map((k: { keyId: string }) => k.keyId)).toEqual(ids.slice(0, 2));
    expect(p1.body.pagination).toEqual({ cursor: ids[2], hasMore: true });
    const p2 = await list({ apiId, limit: 2, cursor: p1.body.pagination.cursor });
    expect(p2.body.data.map((k: { keyId: string }) => k.keyId)).toEqual(ids.slice(2, 4));
    expect(p2.body.pagination).toEqual({ cursor: ids[4], hasMore: true });
    const p3 = await list({ apiId, limit: 2, cursor: p2.body.pagination.cursor });
    expect(p3.body.data.map((k: { keyId: string }) => k.keyId)).toEqual(ids.slice(4));
    expect(p3.body.pagination).toEqual({ hasMore: false });
    expect("cursor" in p3.body.pagination).toBe(false);
  });

  test("a page that ends exactly at the last key has no cursor", async () => {
    const { apiId, ids } = await apiWithKeys(4);
    const p1 = await list({ apiId, limit: 4 });
    expect(p1.body.data.map((k: { keyId: string }) => k.keyId)).toEqual(ids);
    expect(p1.body.pagination).toEqual({ hasMore: false });
  });

  test("limit defaults to 100", async () => {
    const { apiId, ids } = await apiWithKeys(101);
    const p1 = await list({ apiId });
    expect(p1.body.data.length).toBe(100);
    expect(p1.body.pagination).toEqual({ cursor: ids[100], hasMore: true });
    const p2 = await list({ apiId, cursor: ids[100] });
    expect(p2.body.data.map((k: { keyId: string }) => k.keyId)).toEqual([ids[100]]);
    expect(p2.body.pagination).toEqual({ hasMore: false });
  });

  test("lists only the keys of the API asked for", async () => {
    const a = await apiWithKeys(2);
    await apiWithKeys(3);
    const res = await list({ apiId: a.apiId });
    expect(res.body.data.map((k: { keyId: string }) => k.keyId)).toEqual(a.ids);
  });

  test("externalId filters to the keys of that identity; an unknown one gives []", async () => {
    const apiId = await createApi(h, "owners");
    const alice1 = await createKey(h, { apiId, externalId: "alice" });
    const alice2 = await createKey(h, { apiId, externalId: "alice" });
    await createKey(h, { apiId, externalId: "bob" });
    await createKey(h, { apiId });
    const res = await list({ apiId, externalId: "alice" });
    expect(res.body.data.map((k: { keyId: string }) => k.keyId).sort()).toEqual([alice1.keyId, alice2.keyId].sort());
    expect(res.body.data.map((k: { identity: { externalId: string } }) => k.identity.externalId)).toEqual(["alice", "alice"]);
    expect(res.body.pagination).toEqual({ hasMore: false });
    const none = await list({ apiId, externalId: "nobody" });
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);
    expect(none.body.pagination).toEqual({ hasMore: false });
  });

  test("decrypt:true returns the plaintext of recoverable keys only", async () => {
    const apiId = await createApi(h, "vault");
    const secret = await createKey(h, { apiId, recoverable: true, prefix: "rec" });
    const plain = await createKey(h, { apiId });
    const res = await list({ apiId, decrypt: true });
    const byId = new Map(res.body.data.map((k: { keyId: string }) => [k.keyId, k]));
    expect((byId.get(secret.keyId) as { plaintext?: string }).plaintext).toBe(secret.key);
    expect("plaintext" in (byId.get(plain.keyId) as object)).toBe(false);
  });

  test("without decrypt (or decrypt:false) no plaintext is returned", async () => {
    const apiId = await createApi(h, "vault2");
    await createKey(h, { apiId, recoverable: true });
    for (const body of [{ apiId }, { apiId, decrypt: false }]) {
      const res = await list(body);
      expect(res.body.data.length).toBe(1);
      expect("plaintext" in res.body.data[0]).toBe(false);
    }
  });

  test("`api.<apiId>.read_key` + `api.<apiId>.read_api` (+ decrypt_key) suffice", async () => {
    const apiId = await createApi(h, "scoped");
    const k = await createKey(h, { apiId, recoverable: true });
    const root = await h.rootKeyWith([`api.${apiId}.read_key`, `api.${apiId}.read_api`, `api.${apiId}.decrypt_key`]);
    const res = await list({ apiId, decrypt: true }, root);
    expect(res.status).toBe(200);
    expect(res.body.data[0].plaintext).toBe(k.key);
  });
});

describe("400", () => {
  const apiId = "api_123";
  test.each([
    ["limit 0", { apiId, limit: 0 }, "body.limit"],
    ["limit 101", { apiId, limit: 101 }, "body.limit"],
    ["limit as a string", { apiId, limit: "10" }, "body.limit"],
    ["limit not an integer", { apiId, limit: 1.5 }, "body.limit"],
    ["empty cursor", { apiId, cursor: "" }, "body.cursor"],
    ["externalId with a space", { apiId, externalId: "a b" }, "body.externalId"],
    ["empty externalId", { apiId, externalId: "" }, "body.externalId"],
    ["decrypt not a boolean", { apiId, decrypt: "yes" }, "body.decrypt"],
    ["apiId missing", {}, "body.apiId"],
    ["unknown field", { apiId, offset: 3 }, "body.offset"],
  ])("%s", async (_label, body, location) => {
    expectInvalid(h, await list(body), location);
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await list({ apiId: "api_123" }, "tg_root_unknown"), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_key", async () => {
    const apiId = await createApi(h, "perm-1");
    await h.expectDeniedWithout("api.*.read_key", { apiId }, apiId);
  });

  test("without read_api", async () => {
    const apiId = await createApi(h, "perm-2");
    await h.expectDeniedWithout("api.*.read_api", { apiId }, apiId);
  });

  test("decrypt:true without decrypt_key", async () => {
    const apiId = await createApi(h, "perm-3");
    await h.expectDeniedWithout("api.*.decrypt_key", { apiId, decrypt: true }, apiId);
  });

  test("per-API grants do not reach another API", async () => {
    const a = await createApi(h, "perm-a");
    const b = await createApi(h, "perm-b");
    const res = await list({ apiId: b }, await h.rootKeyWith([`api.${a}.read_key`, `api.${a}.read_api`]));
    expectError(h, res, 403, INSUFFICIENT);
  });
});

describe("404", () => {
  test("unknown API", async () => {
    expectError(h, await list({ apiId: "api_doesnotexist" }), 404, API_NOT_FOUND, "The requested API does not exist or has been deleted.");
  });

  test("deleted API", async () => {
    const { apiId } = await apiWithKeys(1);
    await h.post("/v2/apis.deleteApi", { apiId });
    expectError(h, await list({ apiId }), 404, API_NOT_FOUND);
  });

  test("API of another workspace", async () => {
    const { apiId } = await apiWithKeys(1);
    await h.expectHiddenFromOtherWorkspace({ apiId }, API_NOT_FOUND);
  });
});
