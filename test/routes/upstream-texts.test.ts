/**
 * A body that fails its operation's schema is answered in upstream's words, `POST request body
 * for '/v2/<route>' failed to validate schema`, with `errors[]` naming each field: one test per
 * case upstream's route tests pin, named after the route folder and test case it follows.
 * Route-specific pinned texts live with their route's tests; the header texts in auth-contract.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { expectError, INVALID_INPUT } from "../support/contract.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.stop(); });

/** [route, body, upstream route folder, upstream test file, upstream case] */
const PINNED: ReadonlyArray<readonly [string, unknown, string, string, string]> = [
  ["/v2/apis.createApi", { name: "ab" }, "v2_apis_create_api", "400_test", "verify error response structure"],
  ["/v2/apis.deleteApi", {}, "v2_apis_delete_api", "400_test", "missing apiId"],
  ["/v2/apis.deleteApi", { apiId: "" }, "v2_apis_delete_api", "400_test", "invalid apiId format"],
  ["/v2/apis.getApi", { apiId: "" }, "v2_apis_get_api", "400_test", "missing apiId field"],
  ["/v2/apis.getApi", { apiId: "" }, "v2_apis_get_api", "404_test", "empty api id"],
  ["/v2/apis.listKeys", {}, "v2_apis_list_keys", "400_test", "missing apiId"],
  ["/v2/identities.createIdentity", {}, "v2_identities_create_identity", "400_test", "missing external id"],
  ["/v2/identities.createIdentity", { externalId: "" }, "v2_identities_create_identity", "400_test", "empty external id"],
  ["/v2/identities.deleteIdentity", {}, "v2_identities_delete_identity", "400_test", "missing externalID"],
  ["/v2/identities.deleteIdentity", { identity: "" }, "v2_identities_delete_identity", "400_test", "empty external ID"],
  ["/v2/identities.getIdentity", {}, "v2_identities_get_identity", "400_test", "missing both identityId and externalId"],
  ["/v2/identities.updateIdentity", { meta: { test: "value" } }, "v2_identities_update_identity", "400_test", "missing externalId"],
  ["/v2/identities.updateIdentity", { identity: "", meta: { test: "value" } }, "v2_identities_update_identity", "400_test", "empty externalId"],
  ["/v2/keys.deleteKey", {}, "v2_keys_delete_key", "400_test", "missing keyId"],
  ["/v2/keys.updateCredits", {}, "v2_keys_update_credits", "400_test", "missing keyId"],
  ["/v2/keys.addRoles", { roles: ["role_123"] }, "v2_keys_add_roles", "400_test", "missing keyId"],
  ["/v2/keys.addRoles", { keyId: "key_123" }, "v2_keys_add_roles", "400_test", "missing roles"],
];

describe("400", () => {
  for (const [route, body, folder, file, name] of PINNED) {
    test(`400: POST request body for '${route}' failed to validate schema (upstream ${folder} ${file} '${name}')`, async () => {
      const res = await h.post(route, body);
      expectError(h, res, 400, INVALID_INPUT, `POST request body for '${route}' failed to validate schema`);
      expect(res.body.error.title).toBe("Bad Request");
      expect(res.body.error.errors.length).toBeGreaterThan(0);
    });
  }

  test("400: a list route's body that is not an object is the same schema failure (its own path)", async () => {
    const res = await h.post("/v2/apis.listApis", [1]);
    expectError(h, res, 400, INVALID_INPUT, "POST request body for '/v2/apis.listApis' failed to validate schema");
  });
});
