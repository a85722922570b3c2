/**
 * Every error path of every apis.*, keys.*, permissions.* and identities.* method of the official
 * SDK (`@unkey/api` 2.5) against tollgate. Each error must surface as the class the SDK maps that
 * status to (its typed `*ErrorResponse`, whose body it parses with zod, or its `APIError` for a
 * status the method does not declare), never as a ResponseValidationError or SDKValidationError
 * of the SDK's own. The method list is taken from the SDK itself, so a method without cases fails.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Unkey } from "@unkey/api";
import {
  APIError, BadRequestErrorResponse, ConflictErrorResponse, ForbiddenErrorResponse, NotFoundErrorResponse,
  PreconditionFailedErrorResponse, ResponseValidationError, SDKValidationError, UnauthorizedErrorResponse, UnkeyError,
} from "@unkey/api/models/errors";
import { startHarness, type Harness } from "../support/harness.ts";
import { sdkClient } from "./client.ts";

let h: Harness;
/** Every grant. */
let root: Unkey;
/** An unknown root key. */
let unknown: Unkey;
/** A root key whose only grant is unrelated to every route below. */
let weak: Unkey;
/** Records the cases act on, made once. */
let f: { apiId: string; protectedApiId: string; keyId: string; key: string; unencryptedApiId: string; unencryptedKeyId: string; roleId: string; permissionId: string; identityId: string };

const client = (rootKey: string) => sdkClient(h, rootKey);

beforeAll(async () => {
  h = await startHarness();
  root = client(h.rootKey);
  unknown = client("tg_root_unknown");
  weak = client(await h.rootKeyWith(["ratelimit.*.limit"]));
  const apiId = (await root.apis.createApi({ name: "sdk-errors" })).data.apiId;
  const protectedApiId = (await root.apis.createApi({ name: "sdk-protected" })).data.apiId;
  await h.records.run("UPDATE apis SET delete_protection = TRUE WHERE id = ?", protectedApiId);
  const { keyId, key } = (await root.keys.createKey({ apiId, recoverable: true })).data;
  const unencryptedApiId = (await root.apis.createApi({ name: "sdk-unencrypted" })).data.apiId;
  const unencryptedKeyId = (await root.keys.createKey({ apiId: unencryptedApiId, recoverable: true })).data.keyId;
  await h.records.run("UPDATE key_spaces SET store_encrypted_keys = FALSE WHERE id = (SELECT key_space_id FROM apis WHERE id = ?)", unencryptedApiId);
  const roleId = (await root.permissions.createRole({ name: "sdk.errors.role" })).data.roleId;
  const permissionId = (await root.permissions.createPermission({ name: "Errors", slug: "sdk.errors" })).data.permissionId;
  const identityId = (await root.identities.createIdentity({ externalId: "sdk_errors_user" })).data.identityId;
  f = { apiId, protectedApiId, keyId, key, unencryptedApiId, unencryptedKeyId, roleId, permissionId, identityId };
});
afterAll(async () => { await h.stop(); });

type ErrorClass = new (...args: never[]) => UnkeyError;
interface Case {
  status: number;
  error: ErrorClass;
  call: () => Promise<unknown>;
}
type Cases = Record<string, Case[]>;

const bad = (call: () => Promise<unknown>): Case => ({ status: 400, error: BadRequestErrorResponse, call });
const unauthorized = (call: () => Promise<unknown>): Case => ({ status: 401, error: UnauthorizedErrorResponse, call });
const forbidden = (call: () => Promise<unknown>): Case => ({ status: 403, error: ForbiddenErrorResponse, call });
const notFound = (call: () => Promise<unknown>): Case => ({ status: 404, error: NotFoundErrorResponse, call });
const conflict = (call: () => Promise<unknown>): Case => ({ status: 409, error: ConflictErrorResponse, call });
/** A status the SDK method does not declare: it raises its generic APIError, with the status. */
const undeclared = (status: number, call: () => Promise<unknown>): Case => ({ status, error: APIError, call });

const APIS: Cases = {
  createApi: [bad(() => root.apis.createApi({ name: "ab" })), unauthorized(() => unknown.apis.createApi({ name: "nope" })), forbidden(() => weak.apis.createApi({ name: "nope" }))],
  getApi: [
    bad(() => root.apis.getApi({ apiId: "a" })), unauthorized(() => unknown.apis.getApi({ apiId: f.apiId })),
    forbidden(() => weak.apis.getApi({ apiId: f.apiId })), notFound(() => root.apis.getApi({ apiId: "api_missing" })),
  ],
  deleteApi: [
    bad(() => root.apis.deleteApi({ apiId: "a-b" })), unauthorized(() => unknown.apis.deleteApi({ apiId: f.apiId })),
    forbidden(() => weak.apis.deleteApi({ apiId: f.apiId })), notFound(() => root.apis.deleteApi({ apiId: "api_missing" })),
    { status: 412, error: PreconditionFailedErrorResponse, call: () => root.apis.deleteApi({ apiId: f.protectedApiId }) },
  ],
  listKeys: [
    bad(() => root.apis.listKeys({ apiId: f.apiId, limit: 0 })), unauthorized(() => unknown.apis.listKeys({ apiId: f.apiId })),
    forbidden(() => weak.apis.listKeys({ apiId: f.apiId })), notFound(() => root.apis.listKeys({ apiId: "api_missing" })),
  ],
};

const KEYS: Cases = {
  createKey: [
    bad(() => root.keys.createKey({ apiId: f.apiId, byteLength: 8 })), unauthorized(() => unknown.keys.createKey({ apiId: f.apiId })),
    forbidden(() => weak.keys.createKey({ apiId: f.apiId })), notFound(() => root.keys.createKey({ apiId: "api_missing" })),
    notFound(() => root.keys.createKey({ apiId: f.apiId, roles: ["no.such.role"] })),
    undeclared(409, () => root.keys.createKey({ apiId: f.apiId, permissions: ["errors"] })),
    undeclared(412, () => root.keys.createKey({ apiId: f.unencryptedApiId, recoverable: true })),
  ],
  verifyKey: [
    bad(() => root.keys.verifyKey({ key: f.key, permissions: "a AND" })), unauthorized(() => unknown.keys.verifyKey({ key: f.key })),
    undeclared(412, () => root.keys.verifyKey({ key: f.key, ratelimits: [{ name: "not_configured" }] })),
  ],
  getKey: [
    bad(() => root.keys.getKey({ keyId: "k" })), unauthorized(() => unknown.keys.getKey({ keyId: f.keyId })),
    forbidden(() => weak.keys.getKey({ keyId: f.keyId })), notFound(() => root.keys.getKey({ keyId: "key_missing" })),
  ],
  whoami: [
    bad(() => root.keys.whoami({ key: "" })), unauthorized(() => unknown.keys.whoami({ key: f.key })),
    forbidden(() => weak.keys.whoami({ key: f.key })), notFound(() => root.keys.whoami({ key: "sk_missing" })),
  ],
  updateKey: [
    bad(() => root.keys.updateKey({ keyId: f.keyId, name: "" })),
    bad(() => root.keys.updateKey({ keyId: f.keyId, credits: { refill: { interval: "monthly", amount: 1 } } })),
    unauthorized(() => unknown.keys.updateKey({ keyId: f.keyId })), forbidden(() => weak.keys.updateKey({ keyId: f.keyId, name: "x" })),
    notFound(() => root.keys.updateKey({ keyId: "key_missing" })), notFound(() => root.keys.updateKey({ keyId: f.keyId, roles: ["no.such.role"] })),
  ],
  deleteKey: [
    bad(() => root.keys.deleteKey({ keyId: "k" })), unauthorized(() => unknown.keys.deleteKey({ keyId: f.keyId })),
    forbidden(() => weak.keys.deleteKey({ keyId: f.keyId })), notFound(() => root.keys.deleteKey({ keyId: "key_missing" })),
  ],
  updateCredits: [
    bad(() => root.keys.updateCredits({ keyId: f.keyId, operation: "increment" })), unauthorized(() => unknown.keys.updateCredits({ keyId: f.keyId, operation: "set" })),
    forbidden(() => weak.keys.updateCredits({ keyId: f.keyId, operation: "set" })), notFound(() => root.keys.updateCredits({ keyId: "key_missing", operation: "set" })),
  ],
  addPermissions: [
    bad(() => root.keys.addPermissions({ keyId: f.keyId, permissions: [] })), unauthorized(() => unknown.keys.addPermissions({ keyId: f.keyId, permissions: ["a"] })),
    forbidden(() => weak.keys.addPermissions({ keyId: f.keyId, permissions: ["a"] })), notFound(() => root.keys.addPermissions({ keyId: "key_missing", permissions: ["a"] })),
    undeclared(409, () => root.keys.addPermissions({ keyId: f.keyId, permissions: ["ERRORS"] })),
  ],
  removePermissions: [
    bad(() => root.keys.removePermissions({ keyId: f.keyId, permissions: ["a b"] })), unauthorized(() => unknown.keys.removePermissions({ keyId: f.keyId, permissions: ["a"] })),
    forbidden(() => weak.keys.removePermissions({ keyId: f.keyId, permissions: ["a"] })), notFound(() => root.keys.removePermissions({ keyId: f.keyId, permissions: ["no.such.perm"] })),
  ],
  setPermissions: [
    bad(() => root.keys.setPermissions({ keyId: f.keyId, permissions: [""] })), unauthorized(() => unknown.keys.setPermissions({ keyId: f.keyId, permissions: [] })),
    forbidden(() => weak.keys.setPermissions({ keyId: f.keyId, permissions: [] })), notFound(() => root.keys.setPermissions({ keyId: "key_missing", permissions: [] })),
  ],
  addRoles: [
    bad(() => root.keys.addRoles({ keyId: f.keyId, roles: [] })), unauthorized(() => unknown.keys.addRoles({ keyId: f.keyId, roles: ["r"] })),
    forbidden(() => weak.keys.addRoles({ keyId: f.keyId, roles: ["sdk.errors.role"] })), notFound(() => root.keys.addRoles({ keyId: f.keyId, roles: ["no.such.role"] })),
  ],
  removeRoles: [
    bad(() => root.keys.removeRoles({ keyId: f.keyId, roles: ["a b"] })), unauthorized(() => unknown.keys.removeRoles({ keyId: f.keyId, roles: ["r"] })),
    forbidden(() => weak.keys.removeRoles({ keyId: f.keyId, roles: ["sdk.errors.role"] })), notFound(() => root.keys.removeRoles({ keyId: f.keyId, roles: ["no.such.role"] })),
  ],
  setRoles: [
    bad(() => root.keys.setRoles({ keyId: "", roles: [] })), unauthorized(() => unknown.keys.setRoles({ keyId: f.keyId, roles: [] })),
    forbidden(() => weak.keys.setRoles({ keyId: f.keyId, roles: [] })), notFound(() => root.keys.setRoles({ keyId: "key_missing", roles: [] })),
  ],
  rerollKey: [
    bad(() => root.keys.rerollKey({ keyId: f.keyId, expiration: -1 })), unauthorized(() => unknown.keys.rerollKey({ keyId: f.keyId, expiration: 0 })),
    forbidden(() => weak.keys.rerollKey({ keyId: f.keyId, expiration: 0 })), notFound(() => root.keys.rerollKey({ keyId: "key_missing", expiration: 0 })),
    undeclared(412, () => root.keys.rerollKey({ keyId: f.unencryptedKeyId, expiration: 0 })),
  ],
  // Not served (importing keys needs a migration provider, which tollgate does not have): the SDK
  // still raises its typed 404 for the route-not-found answer.
  migrateKeys: [notFound(() => root.keys.migrateKeys({ migrationId: "m", apiId: f.apiId, keys: [{ hash: "x" }] }))],
};

const PERMISSIONS: Cases = {
  createPermission: [
    bad(() => root.permissions.createPermission({ name: "x", slug: "not a slug" })), unauthorized(() => unknown.permissions.createPermission({ name: "x", slug: "x" })),
    forbidden(() => weak.permissions.createPermission({ name: "x", slug: "x" })), conflict(() => root.permissions.createPermission({ name: "ERRORS", slug: "other.slug" })),
  ],
  getPermission: [
    bad(() => root.permissions.getPermission({ permission: "" })), unauthorized(() => unknown.permissions.getPermission({ permission: f.permissionId })),
    forbidden(() => weak.permissions.getPermission({ permission: f.permissionId })), notFound(() => root.permissions.getPermission({ permission: "perm_missing" })),
  ],
  listPermissions: [
    bad(() => root.permissions.listPermissions({ limit: 101 })), unauthorized(() => unknown.permissions.listPermissions({})),
    forbidden(() => weak.permissions.listPermissions({})),
  ],
  deletePermission: [
    bad(() => root.permissions.deletePermission({ permission: "a b" })), unauthorized(() => unknown.permissions.deletePermission({ permission: f.permissionId })),
    forbidden(() => weak.permissions.deletePermission({ permission: f.permissionId })), notFound(() => root.permissions.deletePermission({ permission: "perm_missing" })),
  ],
  createRole: [
    bad(() => root.permissions.createRole({ name: "Billing Manager" })), unauthorized(() => unknown.permissions.createRole({ name: "x" })),
    forbidden(() => weak.permissions.createRole({ name: "x" })), conflict(() => root.permissions.createRole({ name: "SDK.ERRORS.ROLE" })),
    conflict(() => root.permissions.createRole({ name: "sdk.errors.other", permissions: ["errors"] })),
  ],
  getRole: [
    bad(() => root.permissions.getRole({ role: "" })), unauthorized(() => unknown.permissions.getRole({ role: f.roleId })),
    forbidden(() => weak.permissions.getRole({ role: f.roleId })), notFound(() => root.permissions.getRole({ role: "role_missing" })),
  ],
  listRoles: [
    bad(() => root.permissions.listRoles({ limit: 0 })), unauthorized(() => unknown.permissions.listRoles({})), forbidden(() => weak.permissions.listRoles({})),
  ],
  deleteRole: [
    bad(() => root.permissions.deleteRole({ role: "" })), unauthorized(() => unknown.permissions.deleteRole({ role: f.roleId })),
    forbidden(() => weak.permissions.deleteRole({ role: f.roleId })),
    // The SDK declares no 404 for deleteRole, though upstream answers one too.
    undeclared(404, () => root.permissions.deleteRole({ role: "role_missing" })),
  ],
  setRolePermissions: [
    bad(() => root.permissions.setRolePermissions({ roleId: f.roleId, permissions: ["a b"] })), unauthorized(() => unknown.permissions.setRolePermissions({ roleId: f.roleId, permissions: [] })),
    forbidden(() => weak.permissions.setRolePermissions({ roleId: f.roleId, permissions: [] })), notFound(() => root.permissions.setRolePermissions({ roleId: "role_missing", permissions: [] })),
  ],
};

const IDENTITIES: Cases = {
  createIdentity: [
    bad(() => root.identities.createIdentity({ externalId: "a b" })), unauthorized(() => unknown.identities.createIdentity({ externalId: "x" })),
    forbidden(() => weak.identities.createIdentity({ externalId: "x" })), conflict(() => root.identities.createIdentity({ externalId: "sdk_errors_user" })),
  ],
  getIdentity: [
    bad(() => root.identities.getIdentity({ identity: "" })), unauthorized(() => unknown.identities.getIdentity({ identity: f.identityId })),
    forbidden(() => weak.identities.getIdentity({ identity: f.identityId })), notFound(() => root.identities.getIdentity({ identity: "nobody" })),
  ],
  listIdentities: [
    bad(() => root.identities.listIdentities({ limit: 0 })), unauthorized(() => unknown.identities.listIdentities({})), forbidden(() => weak.identities.listIdentities({})),
  ],
  updateIdentity: [
    bad(() => root.identities.updateIdentity({ identity: f.identityId, ratelimits: [{ name: "ab", limit: 1, duration: 1000, autoApply: false }] })),
    unauthorized(() => unknown.identities.updateIdentity({ identity: f.identityId })), forbidden(() => weak.identities.updateIdentity({ identity: f.identityId, meta: {} })),
    notFound(() => root.identities.updateIdentity({ identity: "nobody", meta: {} })),
  ],
  deleteIdentity: [
    bad(() => root.identities.deleteIdentity({ identity: "" })), unauthorized(() => unknown.identities.deleteIdentity({ identity: f.identityId })),
    forbidden(() => weak.identities.deleteIdentity({ identity: f.identityId })), notFound(() => root.identities.deleteIdentity({ identity: "nobody" })),
  ],
};

const GROUPS = { apis: APIS, keys: KEYS, permissions: PERMISSIONS, identities: IDENTITIES } as const;

/** The methods the SDK's group object offers, read from its prototype. */
function sdkMethods(group: keyof typeof GROUPS): string[] {
  const sdk = new Unkey({ rootKey: "x", serverURL: "http://127.0.0.1:1" });
  const proto = Object.getPrototypeOf(sdk[group]) as object;
  return Object.getOwnPropertyNames(proto).filter((name) => name !== "constructor").sort();
}

test("every method of the in-scope SDK groups has error cases", () => {
  for (const group of Object.keys(GROUPS) as Array<keyof typeof GROUPS>) {
    expect({ group, methods: Object.keys(GROUPS[group]).sort() }).toEqual({ group, methods: sdkMethods(group) });
  }
});

for (const [group, cases] of Object.entries(GROUPS)) {
  describe(group, () => {
    for (const [method, list] of Object.entries(cases)) {
      for (const [i, c] of list.entries()) {
        test(`${method}: ${c.status} is ${c.error.name}${list.filter((x) => x.status === c.status).length > 1 ? ` (#${i + 1})` : ""}`, async () => {
          const error = await c.call().then(() => undefined, (e: unknown) => e);
          expect(error).not.toBeInstanceOf(ResponseValidationError);
          expect(error).not.toBeInstanceOf(SDKValidationError);
          expect(error).toBeInstanceOf(c.error);
          const sdkError = error as UnkeyError & { data$?: { meta: { requestId: string }; error: { status: number } } };
          expect(sdkError.statusCode).toBe(c.status);
          if (c.error !== APIError) {
            expect(sdkError.data$?.error.status).toBe(c.status);
            expect(sdkError.data$?.meta.requestId).toMatch(/^req_/);
          }
        });
      }
    }
  });
}
