/**
 * "Not found" is one answer, for the references isolation.test.ts does not reach through the route
 * table: a key's plaintext against a random string, records named by name, slug, externalId or a
 * namespace id, roles and permissions named inside a list, list filters, and a root key's grant on
 * another workspace's API. Each asks from workspace `stranger` for a record of `default` and for
 * one that never existed, and requires answers that cannot be told apart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, otherWorkspaceRootKey, TEST_ACTOR } from "../support/contract.ts";
import { expectOneAnswer, lookalike } from "../support/not-found.ts";
import { routeTable, type Fixtures } from "../support/route-table.ts";
import { keySpaceOf } from "./v2/analytics/support.ts";
import { insertRollups } from "./v2/analytics/store.ts";

let h: Harness;
let f: Fixtures;
let stranger: string;
/** An API and a key of `stranger`, to name `default`'s roles and permissions on. */
let own: { apiId: string; keyId: string };
const EXTERNAL_ID = "isolation_customer";
const LIMIT_NAMESPACE = "isolation_limits";
let namespaceId: string;
const { setUp } = routeTable(() => h);

beforeAll(async () => {
  h = await startHarness();
  f = await setUp();
  stranger = await otherWorkspaceRootKey(h, "stranger");
  await h.running.services.workspaces.setAnalytics("stranger", true, TEST_ACTOR);
  const apiId = await createApi(h, "strangers-own", stranger);
  own = { apiId, keyId: (await createKey(h, { apiId }, stranger)).keyId };
  expect((await h.post("/v2/identities.createIdentity", { externalId: EXTERNAL_ID })).status).toBe(200);
  expect((await h.post("/v2/ratelimit.limit", { namespace: LIMIT_NAMESPACE, identifier: "u", limit: 5, duration: 60_000 })).status).toBe(200);
  namespaceId = (await h.records.rows<{ id: string }>("SELECT id FROM ratelimit_namespaces WHERE name = ?", f.namespace))[0]!.id;
});
afterAll(async () => { await h.stop(); });

test("keys.whoami: a live key of another workspace and a random string", async () => {
  await expectOneAnswer(h, { path: "/v2/keys.whoami", body: { key: f.key }, key: stranger, ref: f.key, instead: "not-a-key-at-all" });
});

test("keys.verifyKey: a live key of another workspace and a random string are both a bare NOT_FOUND", async () => {
  const res = await expectOneAnswer(h, { path: "/v2/keys.verifyKey", body: { key: f.key, permissions: "a AND" }, key: stranger, ref: f.key, instead: "not-a-key-at-all" });
  expect(res.body.data).toEqual({ valid: false, code: "NOT_FOUND" });
});

describe("records named by name, slug, externalId or a second id", () => {
  const cases: Array<[string, string, () => Record<string, unknown>, () => string]> = [
    ["an identity by externalId", "/v2/identities.getIdentity", () => ({ identity: EXTERNAL_ID }), () => EXTERNAL_ID],
    ["an identity by externalId", "/v2/identities.updateIdentity", () => ({ identity: EXTERNAL_ID, meta: {} }), () => EXTERNAL_ID],
    ["an identity by externalId", "/v2/identities.deleteIdentity", () => ({ identity: EXTERNAL_ID }), () => EXTERNAL_ID],
    ["a permission by slug", "/v2/permissions.getPermission", () => ({ permission: f.permissionSlug }), () => f.permissionSlug],
    ["a permission by slug", "/v2/permissions.deletePermission", () => ({ permission: f.permissionSlug }), () => f.permissionSlug],
    ["a role by name", "/v2/permissions.getRole", () => ({ role: f.roleName }), () => f.roleName],
    ["a role by name", "/v2/permissions.deleteRole", () => ({ role: f.roleName }), () => f.roleName],
    ["a role by name", "/v2/permissions.setRolePermissions", () => ({ roleId: f.roleName, permissions: [] }), () => f.roleName],
    ["a role by name, on a new key", "/v2/keys.createKey", () => ({ apiId: own.apiId, roles: [f.roleName] }), () => f.roleName],
    ["a role by name, on a key", "/v2/keys.updateKey", () => ({ keyId: own.keyId, roles: [f.roleName] }), () => f.roleName],
    ["a role by name, on a key", "/v2/keys.addRoles", () => ({ keyId: own.keyId, roles: [f.roleName] }), () => f.roleName],
    ["a role by name, on a key", "/v2/keys.removeRoles", () => ({ keyId: own.keyId, roles: [f.roleName] }), () => f.roleName],
    ["a role by name, on a key", "/v2/keys.setRoles", () => ({ keyId: own.keyId, roles: [f.roleName] }), () => f.roleName],
    ["a permission by id, on a key", "/v2/keys.removePermissions", () => ({ keyId: own.keyId, permissions: [f.permissionId] }), () => f.permissionId],
    ["a permission by slug, on a key", "/v2/keys.removePermissions", () => ({ keyId: own.keyId, permissions: [f.permissionSlug] }), () => f.permissionSlug],
    ...(["ratelimit", "ratelimits"] as const).flatMap((family): typeof cases => [
      ["a namespace by id", `/v2/${family}.setOverride`, () => ({ namespace: namespaceId, identifier: "x", limit: 1, duration: 60_000 }), () => namespaceId],
      ["a namespace by id", `/v2/${family}.getOverride`, () => ({ namespace: namespaceId, identifier: f.overrideIdentifier }), () => namespaceId],
      ["a namespace by id", `/v2/${family}.listOverrides`, () => ({ namespace: namespaceId }), () => namespaceId],
      ["a namespace by id", `/v2/${family}.deleteOverride`, () => ({ namespace: namespaceId, identifier: f.overrideIdentifier }), () => namespaceId],
    ]),
    ["an externalId as a filter", "/v2/apis.listKeys", () => ({ apiId: own.apiId, externalId: EXTERNAL_ID }), () => EXTERNAL_ID],
    ["a key id as a filter", "/v2/audit.listLogs", () => ({ resourceId: f.keyId }), () => f.keyId],
    ["a key id as a cursor", "/v2/audit.listLogs", () => ({ cursor: f.keyId }), () => f.keyId],
  ];
  for (const [what, path, body, ref] of cases) {
    test(`${path}: ${what}`, async () => {
      await expectOneAnswer(h, { path, body: body(), key: stranger, ref: ref() });
    });
  }
});

// A namespace the caller does not have is created in its own workspace, whoever else uses the name;
// each test asks from a workspace of its own, which has no namespace of that name yet.
describe("ratelimit.limit on a namespace of another workspace", () => {
  for (const family of ["ratelimit", "ratelimits"]) {
    test(`/v2/${family}.limit: by name, and by id`, async () => {
      for (const ref of [LIMIT_NAMESPACE, namespaceId]) {
        const body = { namespace: ref, identifier: "u", limit: 5, duration: 60_000 };
        const res = await expectOneAnswer(h, { path: `/v2/${family}.limit`, body, key: await otherWorkspaceRootKey(h, `limits_${family}_${ref}`), ref });
        expect(res.body.data).toMatchObject({ success: true, remaining: 4 });
      }
    });
  }
});

test("a permission, role or identity named like one of another workspace is created: no 409 tells it apart", async () => {
  const creates: Array<[string, Record<string, unknown>]> = [
    ["/v2/permissions.createPermission", { name: f.permissionSlug, slug: f.permissionSlug }],
    ["/v2/permissions.createRole", { name: f.roleName }],
    ["/v2/identities.createIdentity", { externalId: EXTERNAL_ID }],
  ];
  // A workspace of its own, so that `stranger` keeps holding none of these names.
  const key = await otherWorkspaceRootKey(h, "namesakes");
  for (const [path, body] of creates) expect((await h.post(path, body, { key })).status).toBe(200);
});

test("analytics.getVerifications: a grant on another workspace's API reads what a grant on no API reads", async () => {
  const workspaceId = (await h.running.services.workspaces.get("default")).id;
  await insertRollups(h, "day", [{ time: h.clock.now() - 86_400_000, workspaceId, keySpaceId: await keySpaceOf(h, f.apiId), count: 7 }]);
  const query = { query: "SELECT SUM(count) AS total FROM key_verifications_per_day_v1" };
  const ask = async (apiId: string) => h.post("/v2/analytics.getVerifications", query, { key: await h.rootKeyWith([`api.${apiId}.read_analytics`], "stranger") });
  const [named, unknown] = [await ask(f.apiId), await ask(lookalike(f.apiId))];
  expect({ ...named.body, meta: null }).toEqual({ ...unknown.body, meta: null });
  expect(named.body.error).toBeUndefined();
  expect((await h.post("/v2/analytics.getVerifications", query)).body.data[0].total).toBe(7);
  // The first query starts the analytics workers, slow on a busy machine; bun's default timeout is 5 s.
}, 30_000);
