/**
 * The one table of protected routes: for each, a valid body built from fixtures made through the
 * API, the grants it needs, and what a root key of another workspace or one lacking a grant gets.
 * The auth contract, the isolation matrix and the hostile-input tests all run from it, and each
 * compares it with the routes the app registers, so a route without a row fails them.
 */
import { expect } from "bun:test";
import { createApp } from "../../src/app.ts";
import { servedRoutes } from "./served-routes.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import type { ApiResponse, Harness } from "./harness.ts";
import { API_NOT_FOUND, INSUFFICIENT, KEY_NOT_FOUND, TEST_ACTOR, createApi, createKey, expectError } from "./contract.ts";

export interface Fixtures {
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
  namespaceId: string;
  overrideIdentifier: string;
}

export interface Route {
  path: string;
  /** A valid minimal body; routes that consume their record get a fresh one per call. */
  body(f: Fixtures): Promise<Record<string, unknown> | unknown[]> | Record<string, unknown> | unknown[];
  /** Grants the route needs, all of them (`api.*.x` style). */
  needs: string[];
  /** What a fully privileged root key of another workspace gets for this workspace's record; null when no record is addressed. */
  foreign: Outcome | null;
  /** What a root key lacking a needed grant gets, when it is not 403 `insufficient_permissions`. */
  denied?: Outcome;
  /** A list route whose answer to the owner names a fixture (so a foreign key's answer can be seen to name none). */
  lists?: true;
}

/** An error status and type path, or verification's 200 `{valid:false, code:"NOT_FOUND"}`. */
export type Outcome = { status: number; type: string } | "NOT_FOUND";

export interface RouteTable {
  routes: Route[];
  /** Makes the fixtures in workspace `default` (and turns its analytics on). */
  setUp(): Promise<Fixtures>;
}

/** Whose records a table makes: workspace `default` with the bootstrap key unless told otherwise. */
export interface TableOwner {
  workspace: string;
  /** A root key of `workspace` holding every grant. */
  rootKey: string;
  /** Put before every name the fixtures get, so that two workspaces' fixtures can be told apart by name. */
  tag: string;
}

/**
 * The table. `harness` is called only when a body or the fixtures are made, so a test file can
 * build the table (and register a test per row) before its harness starts.
 */
export function routeTable(harness: () => Harness, owner?: TableOwner): RouteTable {
  let unique = 0;
  const tag = owner ? `${owner.tag}_` : "";
  const next = (stem: string) => `${tag}${stem}_${++unique}`;
  const key = owner?.rootKey;

  async function created(path: string, body: Record<string, unknown>, field: string): Promise<string> {
    const res = await harness().post(path, body, key === undefined ? {} : { key });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data[field] as string;
  }
  const newIdentity = () => created("/v2/identities.createIdentity", { externalId: next("ext") }, "identityId");
  const newPermission = (slug: string) => created("/v2/permissions.createPermission", { name: slug, slug }, "permissionId");
  const newRole = (name: string) => created("/v2/permissions.createRole", { name }, "roleId");
  const namespaceIdOf = async (name: string) => {
    const res = await harness().post("/v2/ratelimit.listNamespaces", { search: name }, key === undefined ? {} : { key });
    const found = (res.body.data as Array<{ id: string; name: string }> | undefined)?.find((n) => n.name === name);
    if (found === undefined) throw new Error(`ratelimit.listNamespaces answered ${res.status} without ${name}: ${JSON.stringify(res.body)}`);
    return found.id;
  };
  const newKey = async (x: Fixtures) => (await createKey(harness(), { apiId: x.apiId }, key)).keyId;

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
    { path: `/v2/${family}.listNamespaces`, body: () => ({}), lists: true, needs: ["ratelimit.*.read_override"], foreign: null },
    { path: `/v2/${family}.deleteOverride`, body: async (x) => ({ namespace: x.namespace, identifier: await newOverride(x) }), needs: ["ratelimit.*.delete_override"], foreign: NS_GONE },
  ];
  const KEY_GONE = notFound(KEY_NOT_FOUND);
  /** The newest audit entry of workspace `default` (the fixtures' own changes made some). */
  const newestLogId = async () => (await harness().post("/v2/audit.listLogs", { limit: 1 })).body.data[0].logId as string;

  const routes: Route[] = [
    { path: "/v2/apis.createApi", body: () => ({ name: "contract" }), needs: ["api.*.create_api"], foreign: null },
    { path: "/v2/apis.getApi", body: (x) => ({ apiId: x.apiId }), needs: ["api.*.read_api"], foreign: notFound(API_NOT_FOUND) },
    { path: "/v2/apis.deleteApi", body: async () => ({ apiId: await createApi(harness(), "doomed") }), needs: ["api.*.delete_api"], foreign: notFound(API_NOT_FOUND) },
    { path: "/v2/apis.listKeys", body: (x) => ({ apiId: x.apiId }), needs: ["api.*.read_key", "api.*.read_api"], foreign: notFound(API_NOT_FOUND) },
    { path: "/v2/keys.createKey", body: (x) => ({ apiId: x.apiId }), needs: ["api.*.create_key"], foreign: notFound(API_NOT_FOUND) },
    { path: "/v2/keys.getKey", body: (x) => ({ keyId: x.keyId }), needs: ["api.*.read_key"], foreign: notFound(KEY_NOT_FOUND) },
    { path: "/v2/keys.verifyKey", body: (x) => ({ key: x.key }), needs: ["api.*.verify_key"], foreign: "NOT_FOUND", denied: "NOT_FOUND" },
    { path: "/v2/keys.whoami", body: (x) => ({ key: x.key }), needs: ["api.*.read_key"], foreign: KEY_GONE },
    { path: "/v2/keys.updateKey", body: (x) => ({ keyId: x.keyId, name: "renamed" }), needs: ["api.*.update_key"], foreign: KEY_GONE },
    { path: "/v2/keys.deleteKey", body: async (x) => ({ keyId: await newKey(x) }), needs: ["api.*.delete_key"], foreign: KEY_GONE },
    { path: "/v2/keys.updateCredits", body: (x) => ({ keyId: x.keyId, operation: "set", value: null }), needs: ["api.*.update_key"], foreign: KEY_GONE },
    { path: "/v2/keys.addPermissions", body: (x) => ({ keyId: x.keyId, permissions: [x.permissionSlug] }), needs: ["api.*.update_key", "rbac.*.add_permission_to_key"], foreign: KEY_GONE },
    { path: "/v2/keys.removePermissions", body: (x) => ({ keyId: x.keyId, permissions: [x.permissionSlug] }), needs: ["api.*.update_key", "rbac.*.remove_permission_from_key"], foreign: KEY_GONE },
    { path: "/v2/keys.setPermissions", body: (x) => ({ keyId: x.keyId, permissions: [] }), needs: ["api.*.update_key", "rbac.*.add_permission_to_key", "rbac.*.remove_permission_from_key"], foreign: KEY_GONE },
    { path: "/v2/keys.addRoles", body: (x) => ({ keyId: x.keyId, roles: [x.roleName] }), needs: ["api.*.update_key", "rbac.*.add_role_to_key"], foreign: KEY_GONE },
    { path: "/v2/keys.removeRoles", body: (x) => ({ keyId: x.keyId, roles: [x.roleName] }), needs: ["api.*.update_key", "rbac.*.remove_role_from_key"], foreign: KEY_GONE },
    { path: "/v2/keys.setRoles", body: (x) => ({ keyId: x.keyId, roles: [] }), needs: ["api.*.update_key", "rbac.*.add_role_to_key", "rbac.*.remove_role_from_key"], foreign: KEY_GONE },
    { path: "/v2/keys.rerollKey", body: async (x) => ({ keyId: await newKey(x), expiration: 0 }), needs: ["api.*.create_key"], foreign: KEY_GONE },
    { path: "/v2/identities.createIdentity", body: () => ({ externalId: next("new_ext") }), needs: ["identity.*.create_identity"], foreign: null },
    { path: "/v2/identities.getIdentity", body: (x) => ({ identity: x.identityId }), needs: ["identity.*.read_identity"], foreign: notFound("service/data/identity_not_found") },
    { path: "/v2/identities.listIdentities", body: () => ({}), lists: true, needs: ["identity.*.read_identity"], foreign: null },
    { path: "/v2/identities.updateIdentity", body: (x) => ({ identity: x.identityId, meta: {} }), needs: ["identity.*.update_identity"], foreign: notFound("service/data/identity_not_found") },
    { path: "/v2/identities.deleteIdentity", body: async () => ({ identity: await newIdentity() }), needs: ["identity.*.delete_identity"], foreign: notFound("service/data/identity_not_found") },
    { path: "/v2/permissions.createPermission", body: () => { const s = next("p.new"); return { name: s, slug: s }; }, needs: ["rbac.*.create_permission"], foreign: null },
    { path: "/v2/permissions.getPermission", body: (x) => ({ permission: x.permissionId }), needs: ["rbac.*.read_permission"], foreign: notFound("service/data/permission_not_found") },
    { path: "/v2/permissions.listPermissions", body: () => ({}), lists: true, needs: ["rbac.*.read_permission"], foreign: null },
    { path: "/v2/permissions.deletePermission", body: async () => ({ permission: await newPermission(next("perm.gone")) }), needs: ["rbac.*.delete_permission"], foreign: notFound("service/data/permission_not_found") },
    { path: "/v2/permissions.createRole", body: () => ({ name: next("new_role") }), needs: ["rbac.*.create_role"], foreign: null },
    { path: "/v2/permissions.getRole", body: (x) => ({ role: x.roleId }), needs: ["rbac.*.read_role"], foreign: notFound("service/data/role_not_found") },
    { path: "/v2/permissions.listRoles", body: () => ({}), lists: true, needs: ["rbac.*.read_role"], foreign: null },
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
    { path: "/v2/audit.listLogs", body: () => ({ limit: 100 }), lists: true, needs: ["audit.*.read_log"], foreign: null },
    { path: "/v2/apis.listApis", body: () => ({}), lists: true, needs: ["api.*.read_api"], foreign: null },
    { path: "/v2/rootKeys.whoami", body: () => ({}), needs: [], foreign: null },
  ];

  async function setUp(): Promise<Fixtures> {
    const h = harness();
    const namespace = `${tag}contract_ns`;
    const permissionSlug = `${tag}contract.perm`;
    const roleName = `${tag}contract_role`;
    await created("/v2/ratelimit.limit", { namespace, identifier: "first", limit: 10, duration: 60_000 }, "success");
    await h.running.services.workspaces.setAnalytics(owner?.workspace ?? "default", true, TEST_ACTOR);
    const apiId = await createApi(h, `${tag}contract`, key);
    const k = await createKey(h, { apiId }, key);
    const f: Fixtures = {
      apiId, keyId: k.keyId, key: k.key, identityId: await newIdentity(), permissionSlug, roleName,
      permissionId: await newPermission(permissionSlug), roleId: await newRole(roleName), namespace, namespaceId: await namespaceIdOf(namespace), overrideIdentifier: "",
    };
    f.overrideIdentifier = await newOverride(f);
    return f;
  }
  return { routes, setUp };
}

/** The POST routes the app registers, to compare a table with. */
export function registeredPostRoutes(h: Harness): string[] {
  const app = createApp({ services: h.running.services, logger: silentLogger, docsUrl: () => "" });
  return servedRoutes(app).filter((r) => r.method === "POST").map((r) => r.path).sort();
}

/** Fails unless `routes` lists exactly the POST routes the app registers. */
export function expectEveryRoute(h: Harness, routes: readonly Route[]): void {
  expect(routes.map((r) => r.path).sort()).toEqual(registeredPostRoutes(h));
}

/** A root key without a needed grant: 403 `insufficient_permissions`, unless the route masks it. */
export const DENIED: Outcome = { status: 403, type: INSUFFICIENT };

/** Asserts an error outcome, or verification's 200 `{valid:false, code:"NOT_FOUND"}`. */
export function expectRouteOutcome(h: Harness, res: ApiResponse, outcome: Outcome): void {
  if (outcome === "NOT_FOUND") {
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ valid: false, code: "NOT_FOUND" });
  } else {
    expectError(h, res, outcome.status, outcome.type);
  }
}
