import { expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";

const h = routeContract("/v2/keys.verifyKey");

test("create api, create key, verify VALID", async () => {
  const api = await h.post("/v2/apis.createApi", { name: "smoke" });
  expect(api.status).toBe(200);
  const key = await h.post("/v2/keys.createKey", { apiId: api.body.data.apiId, prefix: "sk", name: "k1", meta: { a: 1 } });
  expect(key.status).toBe(200);
  const v = await h.post("/v2/keys.verifyKey", { key: key.body.data.key });
  expect(v.body.data).toEqual({ valid: true, code: "VALID", keyId: key.body.data.keyId, name: "k1", meta: { a: 1 }, enabled: true });
});
