import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import {
  API_NOT_FOUND, createApi, expectError, expectInvalid, expectMissingOneOf, INSUFFICIENT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";

const h = routeContract("/v2/apis.getApi", { api: "orders" });

const NOT_FOUND_DETAIL = "The requested API does not exist or has been deleted.";

describe("200", () => {
  test("returns exactly {id, name}", async () => {
    const res = await h.post("/v2/apis.getApi", { apiId: h.apiId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: expect.stringMatching(/^req_/) }, data: { id: h.apiId, name: "orders" } });
  });

  test("`api.<apiId>.read_api` is enough for that API", async () => {
    const res = await h.post("/v2/apis.getApi", { apiId: h.apiId }, { key: await h.rootKeyWith([`api.${h.apiId}.read_api`]) });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: h.apiId, name: "orders" });
  });

  test("`apis.*.read_api` works like `api.*.read_api`", async () => {
    const res = await h.post("/v2/apis.getApi", { apiId: h.apiId }, { key: await h.rootKeyWith(["apis.*.read_api"]) });
    expect(res.status).toBe(200);
  });
});

describe("400", () => {
  test("apiId shorter than 3", async () => {
    expectInvalid(h, await h.post("/v2/apis.getApi", { apiId: "ap" }), "body.apiId");
  });

  test("apiId longer than 255", async () => {
    expectInvalid(h, await h.post("/v2/apis.getApi", { apiId: `api_${"a".repeat(252)}` }), "body.apiId");
  });

  test("apiId with characters outside [a-zA-Z0-9_]", async () => {
    expectInvalid(h, await h.post("/v2/apis.getApi", { apiId: "api-123" }), "body.apiId");
  });

  test("apiId missing", async () => {
    expectInvalid(h, await h.post("/v2/apis.getApi", {}), "body.apiId");
  });

  test("unknown field", async () => {
    expectInvalid(h, await h.post("/v2/apis.getApi", { apiId: h.apiId, name: "x" }), "body.name");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post("/v2/apis.getApi", { apiId: h.apiId }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without read_api; the detail names both grants that would do", async () => {
    await h.expectDeniedWithout("api.*.read_api", { apiId: h.apiId }, h.apiId);
  });

  test("403: Missing one of these permissions: `api.<apiId>.read_api` does not grant another API (upstream v2_apis_get_api 403_test 'permission for different api')", async () => {
    const other = await createApi(h, "other");
    const res = await h.post("/v2/apis.getApi", { apiId: other }, { key: await h.rootKeyWith([`api.${h.apiId}.read_api`]) });
    expectMissingOneOf(h, res, ["api.*.read_api", `api.${other}.read_api`], [`api.${h.apiId}.read_api`]);
  });

  test("permission is checked before existence, so an unknown API without permission is 403", async () => {
    const res = await h.post("/v2/apis.getApi", { apiId: "api_doesnotexist" }, { key: await h.rootKeyWith(["api.*.create_api"]) });
    expectError(h, res, 403, INSUFFICIENT);
  });
});

describe("404", () => {
  test("unknown API", async () => {
    expectError(h, await h.post("/v2/apis.getApi", { apiId: "api_doesnotexist" }), 404, API_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("deleted API", async () => {
    const gone = await createApi(h, "to-delete");
    expect((await h.post("/v2/apis.deleteApi", { apiId: gone })).status).toBe(200);
    expectError(h, await h.post("/v2/apis.getApi", { apiId: gone }), 404, API_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("API of another workspace, even with every permission there", async () => {
    const foreign = await otherWorkspaceRootKey(h, "getapi-other");
    expectError(h, await h.post("/v2/apis.getApi", { apiId: h.apiId }, { key: foreign }), 404, API_NOT_FOUND, NOT_FOUND_DETAIL);
  });
});
