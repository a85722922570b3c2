/**
 * The authentication and authorization contract, run against every protected route. ROUTES is the
 * one table: a route registered without a row here fails the first test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import {
  API_NOT_FOUND, INSUFFICIENT, KEY_NOT_FOUND, ROOT_KEY_NOT_FOUND, TEST_ACTOR, allGrantsExcept, createApi, createKey, expectError, otherWorkspaceRootKey,
} from "../support/contract.ts";

interface Fixtures {
  apiId: string;
  keyId: string;
  key: string;
  identityId: string;
  permissionId: string;
  permissionSlug: string;
  roleId: string;
  roleName: string;
  /** A rate-limit namespace (by name) holding an override for `overrideIdentifier`. */
  namespace: string;
  overrideIdentifier: string;
}

interface Route {
  path: string;
  /** A valid minimal body; routes that consume their record get a fresh one per call. */
  body(f: Fixtures): Promise<Record<string, unknown> | unknown[]> | Record<string, unknown> | unknown[];
  /** Grants the route needs, all of them (`api.*.x` style). */
  needs: string[];
  /** What a fully privileged root key of another workspace gets for this workspace's record; null when no record is addressed. */
  foreign: Outcome | null;
  /** What a root key lacking a needed grant gets, when it is not 403 `insufficient_permissions`. */
  denied?: Outcome;
}

/** An error status and type path, or verification's 200 `{valid:false, code:"NOT_FOUND"}`. */
type Outcome = { status: number; type: string } | "NOT_FOUND";

let h: Harness;
let f: Fixtures;
let unique = 0;
const next = (stem: string) => `${stem}_${++unique}`;

async function created(path: string, body: Record<string, unknown>, field: string): Promise<string> {
  const res = await h.post(path, body);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data[field] as string;
}
const newIdentity = () => created("/v2/identities.createIdentity", { externalId: next("ext") }, "identityId");
const newPermission = (slug: string) => created("/v2/permissions.createPermission", { name: slug, slug }, "permissionId");
const newRole = (name: string) => created("/v2/permissions.createRole", { name }, "roleId");
const newKey = async () => (await createKey(h, { apiId: f.apiId })).keyId;

const notFound = (type: string) => ({ status: 404, type });
const NS_GONE = notFound("service/data/ratelimit_namespace_not_found");
const newOverride = async (x: Fixtures) => {
  const identifier = next("override");
  await created("/v2/ratelimit.setOverride", { namespace: x.namespace, identifier, limit: 5, duration: 60_000 }, "overrideId");
  return identifier;
};
/** The rate-limit routes of one path family (`ratelimit` upstream, `ratelimits` spec). */
const ratelimitRoutes = (family: "ratelimit" | "ratelimits"): Route[] => [
  { path: `/v2/${family}.limit`, body: (x) => ({ namespace: x.namespace, identifier: next("user"), limit: 100, duration: 60_000 }), needs: ["ratelimit.*.limit"], foreign: null },
  { path: `/v2/${family}.setOverride`, body: (x) => ({ namespace: x.namespace, identifier: next("ov"), limit: 5, duration: 60_000 }), needs: ["ratelimit.*.set_override"], foreign: NS_GONE },
  { path: `/v2/${family}.getOverride`, body: (x) => ({ namespace: x.namespace, identifier: x.overrideIdentifier }), needs: ["ratelimit.*.read_override"], foreign: NS_GONE },
  { path: `/v2/${family}.listOverrides`, body: (x) => ({ namespace: x.namespace }), needs: ["ratelimit.*.read_override"], foreign: NS_GONE },
  { path: `/v2/${family}.deleteOverride`, body: async (x) => ({ namespace: x.namespace, identifier: await newOverride(x) }), needs: ["ratelimit.*.delete_override"], foreign: NS_GONE },
];
const KEY_GONE = notFound(KEY_NOT_FOUND);
/** The newest audit entry of workspace `default` (the fixtures' own changes made some). */
const newestLogId = async () => (await h.post("/v2/audit.listLogs", { limit: 1 })).body.data[0].logId as string;

const ROUTES: Route[] = [
  { path: "/v2/apis.createApi", body: () => ({ name: "contract" }), needs: ["api.*.create_api"], foreign: null },
  { path: "/v2/apis.getApi", body: (x) => ({ apiId: x.apiId }), needs: ["api.*.read_api"], foreign: notFound(API_NOT_FOUND) },
  { path: "/v2/apis.deleteApi", body: async () => ({ apiId: await createApi(h, "doomed") }), needs: ["api.*.delete_api"], foreign: notFound(API_NOT_FOUND) },
  { path: "/v2/apis.listKeys", body: (x) => ({ apiId: x.apiId }), needs: ["api.*.read_key", "api.*.read_api"], foreign: notFound(API_NOT_FOUND) },
  { path: "/v2/keys.createKey", body: (x) => ({ apiId: x.apiId }), needs: ["api.*.create_key"], foreign: notFound(API_NOT_FOUND) },
  { path: "/v2/keys.getKey", body: (x) => ({ keyId: x.keyId }), needs: ["api.*.read_key"], foreign: notFound(KEY_NOT_FOUND) },
  { path: "/v2/keys.verifyKey", body: (x) => ({ key: x.key }), needs: ["api.*.verify_key"], foreign: "NOT_FOUND", denied: "NOT_FOUND" },
  { path: "/v2/keys.whoami", body: (x) => ({ key: x.key }), needs: ["api.*.read_key"], foreign: KEY_GONE },
  { path: "/v2/keys.updateKey", body: (x) => ({ keyId: x.keyId, name: "renamed" }), needs: ["api.*.update_key"], foreign: KEY_GONE },
  { path: "/v2/keys.deleteKey", body: async () => ({ keyId: await newKey() }), needs: ["api.*.delete_key"], foreign: KEY_GONE },
  { path: "/v2/keys.updateCredits", body: (x) => ({ keyId: x.keyId, operation: "set", value: null }), needs: ["api.*.update_key"], foreign: KEY_GONE },
  { path: "/v2/keys.addPermissions", body: (x) => ({ keyId: x.keyId, permissions: [x.permissionSlug] }), needs: ["api.*.update_key", "rbac.*.add_permission_to_key"], foreign: KEY_GONE },
  { path: "/v2/keys.removePermissions", body: (x) => ({ keyId: x.keyId, permissions: [x.permissionSlug] }), needs: ["api.*.update_key", "rbac.*.remove_permission_from_key"], foreign: KEY_GONE },
  { path: "/v2/keys.setPermissions", body: (x) => ({ keyId: x.keyId, permissions: [] }), needs: ["api.*.update_key", "rbac.*.add_permission_to_key", "rbac.*.remove_permission_from_key"], foreign: KEY_GONE },
  { path: "/v2/keys.addRoles", body: (x) => ({ keyId: x.keyId, roles: [x.roleName] }), needs: ["api.*.update_key", "rbac.*.add_role_to_key"], foreign: KEY_GONE },
  { path: "/v2/keys.removeRoles", body: (x) => ({ keyId: x.keyId, roles: [x.roleName] }), needs: ["api.*.update_key"], foreign: KEY_GONE },
  { path: "/v2/keys.setRoles", body: (x) => ({ keyId: x.keyId, roles: [] }), needs: ["api.*.update_key"], foreign: KEY_GONE },
  { path: "/v2/keys.rerollKey", body: async () => ({ keyId: await newKey(), expiration: 0 }), needs: ["api.*.create_key"], foreign: KEY_GONE },
  { path: "/v2/identities.createIdentity", body: () => ({ externalId: next("new_ext") }), needs: ["identity.*.create_identity"], foreign: null },
  { path: "/v2/identities.getIdentity", body: (x) => ({ identity: x.identityId }), needs: ["identity.*.read_identity"], foreign: notFound("service/data/identity_not_found") },
  { path: "/v2/identities.listIdentities", body: () => ({}), needs: ["identity.*.read_identity"], foreign: null },
  { path: "/v2/identities.updateIdentity", body: (x) => ({ identity: x.identityId, meta: {} }), needs: ["identity.*.update_identity"], foreign: notFound("service/data/identity_not_found") },
  { path: "/v2/identities.deleteIdentity", body: async () => ({ identity: await newIdentity() }), needs: ["identity.*.delete_identity"], foreign: notFound("service/data/identity_not_found") },
  { path: "/v2/permissions.createPermission", body: () => { const s = next("p.new"); return { name: s, slug: s }; }, needs: ["rbac.*.create_permission"], foreign: null },
  { path: "/v2/permissions.getPermission", body: (x) => ({ permission: x.permissionId }), needs: ["rbac.*.read_permission"], foreign: notFound("service/data/permission_not_found") },
  { path: "/v2/permissions.listPermissions", body: () => ({}), needs: ["rbac.*.read_permission"], foreign: null },
  { path: "/v2/permissions.deletePermission", body: async () => ({ permission: await newPermission(next("perm.gone")) }), needs: ["rbac.*.delete_permission"], foreign: notFound("service/data/permission_not_found") },
  { path: "/v2/permissions.createRole", body: () => ({ name: next("new_role") }), needs: ["rbac.*.create_role"], foreign: null },
  { path: "/v2/permissions.getRole", body: (x) => ({ role: x.roleId }), needs: ["rbac.*.read_role"], foreign: notFound("service/data/role_not_found") },
  { path: "/v2/permissions.listRoles", body: () => ({}), needs: ["rbac.*.read_role"], foreign: null },
  { path: "/v2/permissions.deleteRole", body: async () => ({ role: await newRole(next("role_gone")) }), needs: ["rbac.*.delete_role"], foreign: notFound("service/data/role_not_found") },
  {
    path: "/v2/permissions.setRolePermissions", body: (x) => ({ roleId: x.roleId, permissions: [x.permissionSlug] }),
    needs: ["rbac.*.add_permission_to_role", "rbac.*.remove_permission_from_role"], foreign: notFound("service/data/role_not_found"),
  },
  ...ratelimitRoutes("ratelimit"),
  ...ratelimitRoutes("ratelimits"),
  { path: "/v2/ratelimit.multiLimit", body: (x) => [{ namespace: x.namespace, identifier: next("user"), limit: 100, duration: 60_000 }], needs: ["ratelimit.*.limit"], foreign: null },
  { path: "/v2/audit.getLog", body: async () => ({ logId: await newestLogId() }), needs: ["audit.*.read_log"], foreign: notFound("service/data/audit_log_not_found") },
  { path: "/v2/analytics.getVerifications", body: () => ({ query: "SELECT SUM(count) AS total FROM key_verifications_per_day_v1" }), needs: ["api.*.read_analytics"], foreign: null },
  { path: "/v2/audit.listLogs", body: () => ({ limit: 10 }), needs: ["audit.*.read_log"], foreign: null },
];

const post = async (r: Route, key: string | null, headers?: Record<string, string>) =>
  h.post(r.path, await r.body(f), { key, ...(headers ? { headers } : {}) });

function expectOutcome(res: Awaited<ReturnType<typeof post>>, outcome: Outcome): void {
  if (outcome === "NOT_FOUND") {
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ valid: false, code: "NOT_FOUND" });
  } else {
    expectError(h, res, outcome.status, outcome.type);
  }
}

/** A root key without a needed grant: 403 `insufficient_permissions`, unless the route masks it. */
const DENIED: Outcome = { status: 403, type: INSUFFICIENT };

beforeAll(async () => {
  h = await startHarness();
  h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  const apiId = await createApi(h, "contract");
  const k = await createKey(h, { apiId });
  const permissionSlug = "contract.perm";
  const roleName = "contract_role";
  const namespace = "contract_ns";
  await created("/v2/ratelimit.limit", { namespace, identifier: "first", limit: 10, duration: 60_000 }, "success");
  f = {
    apiId, keyId: k.keyId, key: k.key, identityId: await newIdentity(), permissionSlug, roleName,
    permissionId: await newPermission(permissionSlug), roleId: await newRole(roleName), namespace, overrideIdentifier: "",
  };
  f.overrideIdentifier = await newOverride(f);
});
afterAll(async () => { await h.stop(); });

test("the table lists every protected route the app registers", () => {
  const app = createApp({ services: h.running.services, logger: silentLogger, docsUrl: () => "" });
  const registered = app.routes.filter((r) => r.method === "POST").map((r) => r.path).sort();
  expect(ROUTES.map((r) => r.path).sort()).toEqual(registered);
});

describe("200", () => {
  for (const r of ROUTES) {
    test(`${r.path}: a root key holding exactly ${r.needs.join(" + ")} succeeds`, async () => {
      const res = await post(r, h.rootKeyWith(r.needs));
      expect(res.status).toBe(200);
      if (r.path === "/v2/keys.verifyKey") expect(res.body.data.code).toBe("VALID");
    });
  }

  test("`apis.*.create_api` works like `api.*.create_api`", async () => {
    expect((await h.post("/v2/apis.createApi", { name: "alias" }, { key: h.rootKeyWith(["apis.*.create_api"]) })).status).toBe(200);
  });

  test("`api.<apiId>.read_api` grants getApi on that API only", async () => {
    const other = await createApi(h, "other");
    const scoped = h.rootKeyWith([`api.${f.apiId}.read_api`]);
    expect((await h.post("/v2/apis.getApi", { apiId: f.apiId }, { key: scoped })).status).toBe(200);
    expectError(h, await h.post("/v2/apis.getApi", { apiId: other }, { key: scoped }), 403, INSUFFICIENT);
  });
});

describe("400", () => {
  for (const r of ROUTES) {
    test(`${r.path}: no Authorization header → authentication_missing`, async () => {
      expectError(h, await post(r, null), 400, "service/authentication/missing");
    });

    test(`${r.path}: malformed headers ('Basic x', 'Bearer', '') → 400`, async () => {
      expectError(h, await post(r, null, { authorization: "Basic x" }), 400, "service/authentication/malformed");
      expectError(h, await post(r, null, { authorization: "Bearer" }), 400, "service/authentication/malformed");
      expectError(h, await post(r, null, { authorization: "" }), 400, "service/authentication/missing");
    });

    test(`${r.path}: validation runs before authentication`, async () => {
      const body = await r.body(f);
      const bad = Array.isArray(body) ? [{ ...(body[0] as object), notAField: true }] : { ...body, notAField: true };
      const res = await h.post(r.path, bad, { key: null });
      expectError(h, res, 400, "service/application/invalid_input");
      expect(res.body.error.errors.map((e: { location: string }) => e.location)).toContain(Array.isArray(body) ? "body[0].notAField" : "body.notAField");
    });
  }
});

describe("401", () => {
  let revoked: string;
  beforeAll(() => {
    const rk = h.running.services.workspaces.createRootKey({ workspace: "default", name: "revoked", permissions: [...ALL_GRANTS] }, TEST_ACTOR);
    h.running.services.workspaces.revokeRootKey(rk.id, TEST_ACTOR);
    revoked = rk.key;
  });

  for (const r of ROUTES) {
    test(`${r.path}: unknown root key`, async () => {
      expectError(h, await post(r, "tg_root_doesnotexist"), 401, ROOT_KEY_NOT_FOUND, "The provided root key is invalid. We could not find the requested key.");
    });

    test(`${r.path}: revoked root key`, async () => {
      expectError(h, await post(r, revoked), 401, ROOT_KEY_NOT_FOUND);
    });
  }
});

describe("403", () => {
  for (const r of ROUTES) {
    test(`${r.path}: expired root key → forbidden`, async () => {
      const { key } = h.running.services.workspaces.createRootKey(
        { workspace: "default", name: "expiring", permissions: [...ALL_GRANTS], expiresAt: h.clock.now() + 1000 }, TEST_ACTOR);
      expect((await post(r, key)).status).toBe(200);
      h.clock.advance(1001);
      expectError(h, await post(r, key), 403, "service/authorization/forbidden", "The root key has expired.");
    });

    for (const missing of r.needs) {
      test(`${r.path}: without ${missing} → ${r.denied ? "masked as not found" : "insufficient_permissions"}`, async () => {
        const res = await post(r, h.rootKeyWith(allGrantsExcept(missing)));
        expectOutcome(res, r.denied ?? DENIED);
        if (res.status === 403) expect(res.body.error.detail).toContain(`'${missing}'`);
      });
    }

    test(`${r.path}: a bare '*' grant gives nothing`, async () => {
      const rk = h.running.services.workspaces.createRootKey({ workspace: "default", name: "star", permissions: ["api.*.read_api"] }, TEST_ACTOR);
      // The CLI refuses '*' as a grant; a row holding it (e.g. imported) must still grant nothing.
      h.running.storage.sqlite.run("UPDATE root_keys SET permissions = ? WHERE id = ?", [JSON.stringify(["*"]), rk.id]);
      expectOutcome(await post(r, rk.key), r.denied ?? DENIED);
    });
  }
});

describe("404", () => {
  let foreignKey: string;
  beforeAll(() => { foreignKey = otherWorkspaceRootKey(h, "elsewhere"); });

  for (const r of ROUTES.filter((x) => x.foreign !== null)) {
    test(`${r.path}: a record of another workspace is not found for a fully privileged root key there`, async () => {
      const body = await r.body(f);
      expectOutcome(await h.post(r.path, body, { key: foreignKey }), r.foreign!);
      // The owner still sees it (nothing was changed or deleted by the foreign call).
      expect((await h.post(r.path, body)).status).toBe(200);
    });
  }
});
