import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import {
  API_NOT_FOUND, createApi, createKey, expectError, expectInvalid, INSUFFICIENT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";

const h = routeContract("/v2/apis.deleteApi");

describe("200", () => {
  test("answers data {} and the API is gone from getApi, listKeys and createKey", async () => {
    const apiId = await createApi(h, "doomed");
    const res = await h.post("/v2/apis.deleteApi", { apiId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ meta: { requestId: expect.stringMatching(/^req_/) }, data: {} });
    expectError(h, await h.post("/v2/apis.getApi", { apiId }), 404, API_NOT_FOUND);
    expectError(h, await h.post("/v2/apis.listKeys", { apiId }), 404, API_NOT_FOUND);
    expectError(h, await h.post("/v2/keys.createKey", { apiId }), 404, API_NOT_FOUND);
  });

  test("is a soft delete: the row stays with deleted_at set to server time", async () => {
    const apiId = await createApi(h, "soft");
    await h.post("/v2/apis.deleteApi", { apiId });
    expect(await h.records.rows("SELECT deleted_at FROM apis WHERE id = ?", apiId)).toEqual([{ deleted_at: h.clock.now() }]);
  });

  test("keys of a deleted API verify as bare NOT_FOUND and getKey is 404", async () => {
    const apiId = await createApi(h, "with-keys");
    const k = await createKey(h, { apiId, name: "k", meta: { a: 1 } });
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data.code).toBe("VALID");
    await h.post("/v2/apis.deleteApi", { apiId });
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data).toEqual({ valid: false, code: "NOT_FOUND" });
    expectError(h, await h.post("/v2/keys.getKey", { keyId: k.keyId }), 404, "service/data/key_not_found");
  });

  test("`api.<apiId>.delete_api` is enough for that API", async () => {
    const apiId = await createApi(h, "scoped");
    const res = await h.post("/v2/apis.deleteApi", { apiId }, { key: await h.rootKeyWith([`api.${apiId}.delete_api`]) });
    expect(res.status).toBe(200);
  });
});

describe("400", () => {
  test("apiId missing", async () => {
    expectInvalid(h, await h.post("/v2/apis.deleteApi", {}), "body.apiId");
  });

  test("apiId shorter than 3 or with a bad character", async () => {
    expectInvalid(h, await h.post("/v2/apis.deleteApi", { apiId: "ap" }), "body.apiId");
    expectInvalid(h, await h.post("/v2/apis.deleteApi", { apiId: "api 1" }), "body.apiId");
  });

  test("unknown field", async () => {
    expectInvalid(h, await h.post("/v2/apis.deleteApi", { apiId: "api_123", force: true }), "body.force");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post("/v2/apis.deleteApi", { apiId: "api_123" }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  test("without delete_api; the API survives", async () => {
    const apiId = await createApi(h, "kept");
    await h.expectDeniedWithout("api.*.delete_api", { apiId }, apiId);
    expect((await h.post("/v2/apis.getApi", { apiId })).status).toBe(200);
  });

  test("`api.<apiId>.delete_api` does not grant another API", async () => {
    const a = await createApi(h, "api-a");
    const b = await createApi(h, "api-b");
    const res = await h.post("/v2/apis.deleteApi", { apiId: b }, { key: await h.rootKeyWith([`api.${a}.delete_api`]) });
    expectError(h, res, 403, INSUFFICIENT);
  });
});

describe("404", () => {
  test("unknown API", async () => {
    const res = await h.post("/v2/apis.deleteApi", { apiId: "api_doesnotexist" });
    expectError(h, res, 404, API_NOT_FOUND, "The requested API does not exist or has been deleted.");
  });

  test("deleting twice", async () => {
    const apiId = await createApi(h, "twice");
    expect((await h.post("/v2/apis.deleteApi", { apiId })).status).toBe(200);
    expectError(h, await h.post("/v2/apis.deleteApi", { apiId }), 404, API_NOT_FOUND);
  });

  test("API of another workspace; it is not deleted", async () => {
    const apiId = await createApi(h, "foreign-target");
    const foreign = await otherWorkspaceRootKey(h, "deleteapi-other");
    expectError(h, await h.post("/v2/apis.deleteApi", { apiId }, { key: foreign }), 404, API_NOT_FOUND);
    expect((await h.post("/v2/apis.getApi", { apiId })).status).toBe(200);
  });
});

describe("412", () => {
  test("an API with delete protection is not deleted", async () => {
    const apiId = await createApi(h, "protected");
    // No route sets delete protection yet; set the column the way updateApi will.
    await h.records.run("UPDATE apis SET delete_protection = TRUE WHERE id = ?", apiId);
    const res = await h.post("/v2/apis.deleteApi", { apiId });
    expectError(h, res, 412, "service/application/protected_resource", "This API has delete protection enabled. Disable it before attempting to delete.");
    expect((await h.post("/v2/apis.getApi", { apiId })).status).toBe(200);
  });
});
