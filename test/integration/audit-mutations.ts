/**
 * The one table of changes made through the API, shared by the audit coverage and atomicity tests:
 * for every mutating route, how to prepare a call and which audit entries it must write. Every
 * registered route is either here or in READ_ONLY, so a new route must be classified.
 */
import type { Harness } from "../support/harness.ts";
import { createApi, createKey } from "../support/contract.ts";

/** One expected entry: its event, and ids or names that must each be one of its resources' id or name. */
export interface Expected {
  event: string;
  refs: string[];
}

export interface Mutation {
  name: string;
  path: string;
  /** Makes what the call needs (with the bootstrap key, before counting); returns the body and the expected entries given the answer's `data`. */
  prepare(): Promise<{ body: unknown; expected(data: any): Expected[] }>;
}

/** What the mutations work in: the harness, an API of the bootstrap workspace, and where to put every secret handed out. */
export interface MutationWorld {
  h: Harness;
  apiId: string;
  secrets: Set<string>;
}

export const READ_ONLY = new Set([
  "/v2/apis.getApi", "/v2/apis.listKeys", "/v2/keys.getKey", "/v2/keys.verifyKey", "/v2/keys.whoami",
  "/v2/identities.getIdentity", "/v2/identities.listIdentities", "/v2/permissions.getPermission", "/v2/permissions.listPermissions",
  "/v2/permissions.getRole", "/v2/permissions.listRoles", "/v2/ratelimit.getOverride", "/v2/ratelimit.listOverrides",
  "/v2/ratelimits.getOverride", "/v2/ratelimits.listOverrides", "/v2/audit.getLog", "/v2/audit.listLogs", "/v2/analytics.getVerifications",
  "/v2/apis.listApis", "/v2/rootKeys.whoami", "/v2/ratelimit.listNamespaces", "/v2/ratelimits.listNamespaces",
]);

const one = (event: string, ...refs: string[]): Expected[] => [{ event, refs }];

export function auditMutations(w: MutationWorld): Mutation[] {
  let unique = 0;
  const next = (stem: string) => `${stem}_${++unique}`;
  const ok = async (path: string, body: unknown): Promise<any> => {
    const res = await w.h.post(path, body);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const newKey = async (body: Record<string, unknown> = {}): Promise<string> => {
    const k = await createKey(w.h, { apiId: w.apiId, ...body });
    w.secrets.add(k.key);
    return k.keyId;
  };
  const newPermission = async () => { const slug = next("perm.cov"); return { slug, id: (await ok("/v2/permissions.createPermission", { name: slug, slug })).permissionId as string }; };
  const newRole = async () => { const name = next("role_cov"); return { name, id: (await ok("/v2/permissions.createRole", { name })).roleId as string }; };
  const newIdentity = async () => { const externalId = next("ext"); return { externalId, id: (await ok("/v2/identities.createIdentity", { externalId })).identityId as string }; };
  const newOverride = async (family: string, namespace: string) => {
    const identifier = next("ov");
    return { identifier, id: (await ok(`/v2/${family}.setOverride`, { namespace, identifier, limit: 5, duration: 60_000 })).overrideId as string };
  };

  /** A key mutation on a fresh key: the entry names the key and its API. */
  const keyMutation = (path: string, event: string, body: (keyId: string) => Promise<Record<string, unknown>> | Record<string, unknown>): Mutation => ({
    name: event, path,
    prepare: async () => { const keyId = await newKey(); return { body: await body(keyId), expected: () => one(event, keyId, w.apiId) }; },
  });

  const ratelimitMutations = (family: "ratelimit" | "ratelimits"): Mutation[] => [
    {
      name: "ratelimit.set_override", path: `/v2/${family}.setOverride`,
      prepare: async () => {
        const namespace = next("ns_set");
        await ok(`/v2/${family}.limit`, { namespace, identifier: "x", limit: 1, duration: 1000 });
        return { body: { namespace, identifier: "user_1", limit: 5, duration: 60_000 }, expected: (d) => one("ratelimit.set_override", d.overrideId, namespace, "user_1") };
      },
    },
    {
      name: "ratelimit.delete_override", path: `/v2/${family}.deleteOverride`,
      prepare: async () => {
        const namespace = next("ns_del");
        await ok(`/v2/${family}.limit`, { namespace, identifier: "x", limit: 1, duration: 1000 });
        const ov = await newOverride(family, namespace);
        return { body: { namespace, identifier: ov.identifier }, expected: () => one("ratelimit.delete_override", ov.id, namespace) };
      },
    },
    {
      name: "ratelimit.create_namespace (auto-created by limit)", path: `/v2/${family}.limit`,
      prepare: async () => {
        const namespace = next("ns_new");
        return { body: { namespace, identifier: "u", limit: 10, duration: 60_000 }, expected: () => one("ratelimit.create_namespace", namespace) };
      },
    },
    {
      name: "nothing for limit on an existing namespace", path: `/v2/${family}.limit`,
      prepare: async () => {
        const namespace = next("ns_old");
        await ok(`/v2/${family}.limit`, { namespace, identifier: "x", limit: 1, duration: 1000 });
        return { body: { namespace, identifier: "u", limit: 10, duration: 60_000 }, expected: () => [] };
      },
    },
  ];

  return [
    { name: "api.create", path: "/v2/apis.createApi", prepare: async () => ({ body: { name: next("audited") }, expected: (d) => one("api.create", d.apiId) }) },
    { name: "api.delete", path: "/v2/apis.deleteApi", prepare: async () => { const id = await createApi(w.h, "doomed"); return { body: { apiId: id }, expected: () => one("api.delete", id) }; } },
    {
      name: "key.create", path: "/v2/keys.createKey",
      prepare: async () => ({ body: { apiId: w.apiId, prefix: "cov", externalId: next("owner"), recoverable: true }, expected: (d) => one("key.create", d.keyId, w.apiId) }),
    },
    keyMutation("/v2/keys.updateKey", "key.update", (keyId) => ({ keyId, name: "renamed", meta: { plan: "pro" } })),
    keyMutation("/v2/keys.deleteKey", "key.delete", (keyId) => ({ keyId })),
    keyMutation("/v2/keys.updateCredits", "key.update_credits", (keyId) => ({ keyId, operation: "set", value: 10 })),
    keyMutation("/v2/keys.addPermissions", "key.add_permissions", (keyId) => ({ keyId, permissions: [next("created.on.the.fly")] })),
    keyMutation("/v2/keys.removePermissions", "key.remove_permissions", async (keyId) => {
      const p = await newPermission();
      await ok("/v2/keys.addPermissions", { keyId, permissions: [p.slug] });
      return { keyId, permissions: [p.slug] };
    }),
    keyMutation("/v2/keys.setPermissions", "key.set_permissions", async (keyId) => ({ keyId, permissions: [(await newPermission()).slug] })),
    keyMutation("/v2/keys.addRoles", "key.add_roles", async (keyId) => ({ keyId, roles: [(await newRole()).name] })),
    keyMutation("/v2/keys.removeRoles", "key.remove_roles", async (keyId) => {
      const r = await newRole();
      await ok("/v2/keys.addRoles", { keyId, roles: [r.name] });
      return { keyId, roles: [r.name] };
    }),
    keyMutation("/v2/keys.setRoles", "key.set_roles", async (keyId) => ({ keyId, roles: [(await newRole()).name] })),
    {
      name: "key.reroll", path: "/v2/keys.rerollKey",
      prepare: async () => { const keyId = await newKey(); return { body: { keyId, expiration: 0 }, expected: (d) => one("key.reroll", d.keyId, keyId, w.apiId) }; },
    },
    {
      name: "permission.create", path: "/v2/permissions.createPermission",
      prepare: async () => { const slug = next("cov.new"); return { body: { name: slug, slug }, expected: (d) => one("permission.create", d.permissionId, slug) }; },
    },
    { name: "permission.delete", path: "/v2/permissions.deletePermission", prepare: async () => { const p = await newPermission(); return { body: { permission: p.id }, expected: () => one("permission.delete", p.id) }; } },
    {
      name: "role.create", path: "/v2/permissions.createRole",
      prepare: async () => {
        const [name, perm] = [next("cov_role"), next("cov.role.perm")];
        return { body: { name, permissions: [perm] }, expected: (d) => one("role.create", d.roleId, name, perm) };
      },
    },
    {
      name: "role.set_permissions", path: "/v2/permissions.setRolePermissions",
      prepare: async () => {
        const r = await newRole();
        await newKey({ roles: [r.name] });
        const perm = next("cov.set.perm");
        return { body: { roleId: r.id, permissions: [perm] }, expected: () => one("role.set_permissions", r.id, perm) };
      },
    },
    { name: "role.delete", path: "/v2/permissions.deleteRole", prepare: async () => { const r = await newRole(); return { body: { role: r.name }, expected: () => one("role.delete", r.id) }; } },
    {
      name: "identity.create", path: "/v2/identities.createIdentity",
      prepare: async () => { const externalId = next("cov_user"); return { body: { externalId }, expected: (d) => one("identity.create", d.identityId, externalId) }; },
    },
    {
      name: "identity.update", path: "/v2/identities.updateIdentity",
      prepare: async () => { const i = await newIdentity(); return { body: { identity: i.id, meta: { tier: 1 } }, expected: () => one("identity.update", i.id) }; },
    },
    {
      name: "identity.delete", path: "/v2/identities.deleteIdentity",
      prepare: async () => { const i = await newIdentity(); return { body: { identity: i.externalId }, expected: () => one("identity.delete", i.id) }; },
    },
    ...ratelimitMutations("ratelimit"),
    ...ratelimitMutations("ratelimits"),
    {
      name: "ratelimit.create_namespace, once per new namespace", path: "/v2/ratelimit.multiLimit",
      prepare: async () => {
        const [a, b] = [next("ns_multi"), next("ns_multi")];
        const check = (namespace: string) => ({ namespace, identifier: "u", limit: 10, duration: 60_000 });
        return { body: [check(a), check(b), check(a)], expected: () => [...one("ratelimit.create_namespace", a), ...one("ratelimit.create_namespace", b)] };
      },
    },
  ];
}
