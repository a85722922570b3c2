import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { BASE58, expectError, expectInvalid, INSUFFICIENT, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";

const h = routeContract("/v2/apis.createApi");

describe("200", () => {
  test("returns exactly {apiId} with an api_ identifier, and the API can be read back", async () => {
    const res = await h.post("/v2/apis.createApi", { name: "payments" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data)).toEqual(["apiId"]);
    const apiId: string = res.body.data.apiId;
    expect(apiId.startsWith("api_")).toBe(true);
    expect(apiId.slice(4)).toMatch(BASE58);
    const read = await h.post("/v2/apis.getApi", { apiId });
    expect(read.body.data).toEqual({ id: apiId, name: "payments" });
  });

  test("name bounds 3 and 256 are accepted", async () => {
    for (const name of ["abc", "n".repeat(256)]) {
      const res = await h.post("/v2/apis.createApi", { name });
      expect(res.status).toBe(200);
      const read = await h.post("/v2/apis.getApi", { apiId: res.body.data.apiId });
      expect(read.body.data.name).toBe(name);
    }
  });

  test("names need not be unique: two APIs with one name get two ids", async () => {
    const a = await h.post("/v2/apis.createApi", { name: "same-name" });
    const b = await h.post("/v2/apis.createApi", { name: "same-name" });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.data.apiId).not.toBe(b.body.data.apiId);
  });

  test("each API gets its own key space", async () => {
    const a = (await h.post("/v2/apis.createApi", { name: "space-a" })).body.data.apiId;
    const b = (await h.post("/v2/apis.createApi", { name: "space-b" })).body.data.apiId;
    const rows = await h.records.rows<{ key_space_id: string }>("SELECT key_space_id FROM apis WHERE id IN (?, ?)", a, b);
    expect(rows.length).toBe(2);
    expect(rows[0]!.key_space_id).not.toBe(rows[1]!.key_space_id);
    expect(rows.every((r) => r.key_space_id.startsWith("ks_"))).toBe(true);
  });

  test("`apis.*.create_api` grants the same as `api.*.create_api`", async () => {
    for (const grant of ["api.*.create_api", "apis.*.create_api"]) {
      const res = await h.post("/v2/apis.createApi", { name: "aliased" }, { key: await h.rootKeyWith([grant]) });
      expect(res.status).toBe(200);
    }
  });
});

describe("400", () => {
  test("name shorter than 3", async () => {
    expectInvalid(h, await h.post("/v2/apis.createApi", { name: "ab" }), "body.name");
  });

  test("name longer than 256", async () => {
    expectInvalid(h, await h.post("/v2/apis.createApi", { name: "n".repeat(257) }), "body.name");
  });

  test("name missing", async () => {
    expectInvalid(h, await h.post("/v2/apis.createApi", {}), "body.name");
  });

  test("name not a string", async () => {
    expectInvalid(h, await h.post("/v2/apis.createApi", { name: 1234 }), "body.name");
  });

  test("unknown field is named", async () => {
    const res = await h.post("/v2/apis.createApi", { name: "valid", deleteProtection: true });
    expectInvalid(h, res, "body.deleteProtection");
  });

  test("nothing is created by a rejected request", async () => {
    const before = await h.records.count("apis");
    await h.post("/v2/apis.createApi", { name: "x" });
    const after = await h.records.count("apis");
    expect(after).toBe(before);
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    const res = await h.post("/v2/apis.createApi", { name: "valid" }, { key: "tg_root_unknown" });
    expectError(h, res, 401, ROOT_KEY_NOT_FOUND, "The provided root key is invalid. We could not find the requested key.");
  });
});

describe("403", () => {
  test("without create_api", async () => {
    await h.expectDeniedWithout("api.*.create_api", { name: "valid" });
  });

  test("a per-API create_api grant does not apply", async () => {
    const res = await h.post("/v2/apis.createApi", { name: "valid" }, { key: await h.rootKeyWith(["api.api_123.create_api"]) });
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'api.*.create_api'");
  });
});
