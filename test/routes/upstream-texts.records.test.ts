/**
 * The details, titles and types upstream's route tests pin for records that are missing, taken or
 * refused, which tollgate answers in the same words: one test per pinned case, named after the
 * upstream route folder and test case. `contains` where upstream asserts a substring, as upstream
 * does. (The schema-failure texts: upstream-texts.test.ts; the header texts: auth-contract.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.ts";
import { API_NOT_FOUND, createApi, createKey, expectError, INVALID_INPUT, KEY_NOT_FOUND } from "../support/contract.ts";

let h: Harness;
let apiId: string;
beforeAll(async () => {
  h = await startHarness();
  apiId = await createApi(h, "upstream-texts");
});
afterAll(async () => { await h.stop(); });

interface Pinned {
  upstream: string;
  call: () => Promise<ApiResponse>;
  status: number;
  type: string;
  title: string;
  /** The whole detail, or `{ contains }` where upstream asserts a part. */
  detail: string | { contains: string };
}

const IDENTITY_NOT_FOUND = "service/data/identity_not_found";
const post = (path: string, body: unknown) => h.post(path, body);
const freshKey = async () => (await createKey(h, { apiId })).keyId;

const PINNED: Pinned[] = [
  { upstream: "v2_apis_get_api 404_test 'non-existent api id'", call: () => post("/v2/apis.getApi", { apiId: "api_doesnotexist" }),
    status: 404, type: API_NOT_FOUND, title: "Not Found", detail: "The requested API does not exist or has been deleted." },
  { upstream: "v2_apis_delete_api 404_test 'non-existent API'", call: () => post("/v2/apis.deleteApi", { apiId: "api_does_not_exist" }),
    status: 404, type: API_NOT_FOUND, title: "Not Found", detail: "The requested API does not exist or has been deleted." },
  { upstream: "v2_identities_get_identity 404_test 'identity ID does not exist'", call: () => post("/v2/identities.getIdentity", { identity: "id_doesnotexist" }),
    status: 404, type: IDENTITY_NOT_FOUND, title: "Not Found", detail: "This identity does not exist." },
  { upstream: "v2_identities_delete_identity 404_test 'delete identity with non-existent external ID'",
    call: () => post("/v2/identities.deleteIdentity", { identity: "non_existent_external" }),
    status: 404, type: IDENTITY_NOT_FOUND, title: "Not Found", detail: "This identity does not exist." },
  { upstream: "v2_identities_update_identity 404_test 'external ID does not exist'",
    call: () => post("/v2/identities.updateIdentity", { identity: "non_existent_external_id", meta: { test: "value" } }),
    status: 404, type: IDENTITY_NOT_FOUND, title: "Not Found", detail: "This identity does not exist." },
  { upstream: "v2_identities_update_identity 400_test 'metadata too large'",
    call: () => post("/v2/identities.updateIdentity", { identity: "identity_123", meta: { large_field: "a".repeat(1024 * 1024) } }),
    status: 400, type: INVALID_INPUT, title: "Bad Request", detail: { contains: "Metadata is too large" } },
  { upstream: "v2_identities_update_identity 400_test 'duplicate ratelimit names'",
    call: () => post("/v2/identities.updateIdentity", { identity: "identity_123", ratelimits: [
      { name: "api_calls", limit: 100, duration: 60000, autoApply: true }, { name: "api_calls", limit: 200, duration: 120000, autoApply: true }] }),
    status: 400, type: INVALID_INPUT, title: "Bad Request", detail: { contains: "api_calls" } },
  { upstream: "v2_keys_delete_key 404_test 'nonexistent keyId'", call: () => post("/v2/keys.deleteKey", { keyId: "key_doesnotexist" }),
    status: 404, type: KEY_NOT_FOUND, title: "Not Found", detail: { contains: "We could not find the requested key" } },
  { upstream: "v2_keys_get_key 404_test 'nonexistent keyId'", call: () => post("/v2/keys.getKey", { keyId: "key_doesnotexist" }),
    status: 404, type: KEY_NOT_FOUND, title: "Not Found", detail: { contains: "We could not find the requested key" } },
  { upstream: "v2_keys_update_key 404_test 'when the key does not exist'", call: () => post("/v2/keys.updateKey", { keyId: "nonexistent_key", enabled: false }),
    status: 404, type: KEY_NOT_FOUND, title: "Not Found", detail: { contains: "We could not find the requested key" } },
  { upstream: "v2_keys_whoami 404_test 'nonexistent raw key'", call: () => post("/v2/keys.whoami", { key: "api_doesnotexist" }),
    status: 404, type: KEY_NOT_FOUND, title: "Not Found", detail: { contains: "We could not find the requested key" } },
  { upstream: "v2_keys_reroll_key 404_test 'nonexistent key'", call: () => post("/v2/keys.rerollKey", { keyId: "key_doesnotexist", expiration: 0 }),
    status: 404, type: KEY_NOT_FOUND, title: "Not Found", detail: { contains: "The specified key was not found" } },
  { upstream: "v2_keys_add_roles 404_test 'key not found'", call: () => post("/v2/keys.addRoles", { keyId: "key_nonexistent123456789", roles: ["role_123"] }),
    status: 404, type: KEY_NOT_FOUND, title: "Not Found", detail: { contains: "The specified key was not found" } },
  { upstream: "v2_keys_remove_permissions 404_test 'key not found'",
    call: () => post("/v2/keys.removePermissions", { keyId: "key_doesnotexist", permissions: ["documents.read"] }),
    status: 404, type: KEY_NOT_FOUND, title: "Not Found", detail: { contains: "key was not found" } },
  { upstream: "v2_keys_add_roles 404_test 'role not found by name'", call: async () => post("/v2/keys.addRoles", { keyId: await freshKey(), roles: ["nonexistent_role"] }),
    status: 404, type: "service/data/role_not_found", title: "Not Found", detail: { contains: "was not found" } },
  { upstream: "v2_keys_remove_permissions 404_test 'permission not found by ID'",
    call: async () => post("/v2/keys.removePermissions", { keyId: await freshKey(), permissions: ["perm_doesnotexist"] }),
    status: 404, type: "service/data/permission_not_found", title: "Not Found", detail: { contains: "was not found" } },
  { upstream: "v2_keys_update_key 400_test 'reject invalid refill config'",
    call: async () => post("/v2/keys.updateKey", { keyId: await freshKey(), credits: { remaining: 100, refill: { interval: "daily", amount: 100, refillDay: 4 } } }),
    status: 400, type: INVALID_INPUT, title: "Bad Request", detail: { contains: "must not be provided when the refill interval is" } },
  { upstream: "v2_keys_create_key 400_test 'credits.remaining null with refill should error'",
    call: () => post("/v2/keys.createKey", { apiId, credits: { remaining: null, refill: { amount: 100, interval: "daily" } } }),
    status: 400, type: INVALID_INPUT, title: "Bad Request", detail: { contains: "credits.remaining" } },
  { upstream: "v2_keys_verify_key 412_test 'without identity - missing ratelimit'",
    call: async () => post("/v2/keys.verifyKey", { key: (await createKey(h, { apiId })).key, ratelimits: [{ name: "does-not-exist" }] }),
    status: 412, type: "service/application/precondition_failed", title: "Precondition Failed", detail: { contains: "ratelimit 'does-not-exist' was requested but does not exist for key '" } },
  { upstream: "v2_permissions_get_permission 404_test 'non-existent permission ID'", call: () => post("/v2/permissions.getPermission", { permission: "perm_does_not_exist" }),
    status: 404, type: "service/data/permission_not_found", title: "Not Found", detail: { contains: "does not exist" } },
  { upstream: "v2_permissions_delete_permission 404_test 'non-existent permission ID'", call: () => post("/v2/permissions.deletePermission", { permission: "perm_does_not_exist" }),
    status: 404, type: "service/data/permission_not_found", title: "Not Found", detail: { contains: "does not exist" } },
  { upstream: "v2_permissions_get_role 404_test 'non-existent role ID'", call: () => post("/v2/permissions.getRole", { role: "role_does_not_exist" }),
    status: 404, type: "service/data/role_not_found", title: "Not Found", detail: { contains: "does not exist" } },
  { upstream: "v2_permissions_delete_role 404_test 'nonexistent role'", call: () => post("/v2/permissions.deleteRole", { role: "role_does_not_exist" }),
    status: 404, type: "service/data/role_not_found", title: "Not Found", detail: { contains: "does not exist" } },
  { upstream: "v2_permissions_create_permission 409_test 'duplicate permission slug'", call: async () => {
    await post("/v2/permissions.createPermission", { name: "test.duplicate.permission-1", slug: "test.duplicate.permission" });
    return post("/v2/permissions.createPermission", { name: "test.duplicate.permission-2", slug: "test.duplicate.permission" });
  }, status: 409, type: "service/data/permission/duplicate", title: "Conflict", detail: { contains: "already exists" } },
  { upstream: "v2_permissions_create_role 409_test 'duplicate role name'", call: async () => {
    await post("/v2/permissions.createRole", { name: "test.duplicate.role" });
    return post("/v2/permissions.createRole", { name: "test.duplicate.role" });
  }, status: 409, type: "service/data/role_already_exists", title: "Conflict", detail: { contains: "already exists" } },
];

describe("pinned texts tollgate shares with upstream", () => {
  for (const p of PINNED) {
    const what = typeof p.detail === "string" ? `'${p.detail}'` : `containing '${p.detail.contains}'`;
    test(`${p.status}: ${what} (upstream ${p.upstream})`, async () => {
      const res = await p.call();
      expectError(h, res, p.status, p.type, typeof p.detail === "string" ? p.detail : undefined);
      expect(res.body.error.title).toBe(p.title);
      if (typeof p.detail !== "string") expect(res.body.error.detail).toContain(p.detail.contains);
    });
  }
});
