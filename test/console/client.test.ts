/**
 * The console's API client against a real service: data on success, pages with their cursor, and
 * every failure as an ApiError carrying the envelope's words (a read-only key's forced write is
 * the API's 403), the request id, and field errors; an unreachable server is status 0.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, ApiError } from "../../src/console/app/api/client.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey } from "../support/contract.ts";

let h: Harness;
let apiId: string;
beforeAll(async () => {
  h = await startHarness();
  apiId = await createApi(h, "client-test");
  for (let i = 0; i < 3; i++) await createKey(h, { apiId });
});
afterAll(async () => {
  await h.stop();
});

/** The browser resolves /v2/… against the page's origin; here the harness's. */
const clientFor = (rootKey: string) => new ApiClient(rootKey, (url, init) => fetch(`${h.url}${url}`, init));

const failure = async (p: Promise<unknown>): Promise<ApiError> => {
  const error = await p.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
};

describe("success", () => {
  test("call answers the data; page answers the items and the next cursor, none on the last page", async () => {
    const client = clientFor(h.rootKey);
    expect(await client.call("apis.getApi", { apiId })).toEqual({ id: apiId, name: "client-test" });
    const first = await client.page("apis.listKeys", { apiId, limit: 2 });
    expect(first.items.length).toBe(2);
    const second = await client.page("apis.listKeys", { apiId, limit: 2, cursor: first.cursor! });
    expect(second).toMatchObject({ cursor: undefined });
    expect(second.items.length).toBe(1);
  });
});

describe("failures", () => {
  test("403: a read-only key's forced write carries the API's title, detail and request id", async () => {
    const { keyId } = await createKey(h, { apiId });
    const e = await failure(clientFor(await h.rootKeyWith(["api.*.read_api", "api.*.read_key"])).call("keys.updateKey", { keyId, enabled: false }));
    expect(e.status).toBe(403);
    expect(e.detail).toContain("update_key");
    expect(e.type).toContain("insufficient_permissions");
    expect(e.requestId).toMatch(/^req_/);
    expect((await h.post("/v2/keys.getKey", { keyId })).body.data.enabled).toBe(true);
  });

  test("401: an unknown root key", async () => {
    expect((await failure(clientFor("tg_nope_000000000000").call("rootKeys.whoami", {}))).status).toBe(401);
  });

  test("400: the field errors come along", async () => {
    const e = await failure(clientFor(h.rootKey).call("apis.createApi", { name: "" }));
    expect(e.status).toBe(400);
    expect(e.fieldErrors.map((f) => f.location)).toContain("body.name");
  });

  test("an unreachable server: status 0 and a plain message", async () => {
    const client = new ApiClient(h.rootKey, () => Promise.reject(new TypeError("fetch failed")));
    const e = await failure(client.call("rootKeys.whoami", {}));
    expect([e.status, e.title]).toEqual([0, "Network error"]);
  });
});
