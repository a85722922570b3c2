/**
 * Every change made through the API writes exactly the expected audit entries: event, actor (the
 * calling root key), resources, remote IP and user agent. MUTATIONS is the one table; every
 * registered route is either in it or listed as read-only, so a new route must be classified.
 * Changes made by the CLI are recorded with actor type `cli`. No entry ever holds a secret.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey } from "../support/contract.ts";

/** One expected entry: its event, and ids or names that must each be one of its resources' id or name. */
interface Expected {
  event: string;
  refs: string[];
}

interface Mutation {
  name: string;
  path: string;
  /** Makes what the call needs (with the bootstrap key, before counting); returns the body and the expected entries given the answer's `data`. */
  prepare(): Promise<{ body: unknown; expected(data: any): Expected[] }>;
}

const READ_ONLY = new Set([
  "/v2/apis.getApi", "/v2/apis.listKeys", "/v2/keys.getKey", "/v2/keys.verifyKey", "/v2/keys.whoami",
  "/v2/identities.getIdentity", "/v2/identities.listIdentities", "/v2/permissions.getPermission", "/v2/permissions.listPermissions",
  "/v2/permissions.getRole", "/v2/permissions.listRoles", "/v2/ratelimit.getOverride", "/v2/ratelimit.listOverrides",
  "/v2/ratelimits.getOverride", "/v2/ratelimits.listOverrides", "/v2/audit.getLog", "/v2/audit.listLogs", "/v2/analytics.getVerifications",
]);

const IP = "198.51.100.23";
const UA = "audit-coverage/1.0";

let h: Harness;
let actor: { id: string; key: string };
let apiId: string;
let unique = 0;
const next = (stem: string) => `${stem}_${++unique}`;
/** Every secret handed out during the run: key strings and root keys. */
const secrets = new Set<string>();

async function ok(path: string, body: unknown): Promise<any> {
  const res = await h.post(path, body);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}
async function newKey(body: Record<string, unknown> = {}): Promise<string> {
  const k = await createKey(h, { apiId, ...body });
  secrets.add(k.key);
  return k.keyId;
}
const newPermission = async () => { const slug = next("perm.cov"); return { slug, id: (await ok("/v2/permissions.createPermission", { name: slug, slug })).permissionId as string }; };
const newRole = async () => { const name = next("role_cov"); return { name, id: (await ok("/v2/permissions.createRole", { name })).roleId as string }; };
const newIdentity = async () => { const externalId = next("ext"); return { externalId, id: (await ok("/v2/identities.createIdentity", { externalId })).identityId as string }; };
const newOverride = async (family: string, namespace: string) => {
  const identifier = next("ov");
  return { identifier, id: (await ok(`/v2/${family}.setOverride`, { namespace, identifier, limit: 5, duration: 60_000 })).overrideId as string };
};
const one = (event: string, ...refs: string[]): Expected[] => [{ event, refs }];

/** A key mutation on a fresh key: the entry names the key and its API. */
const keyMutation = (path: string, event: string, body: (keyId: string) => Promise<Record<string, unknown>> | Record<string, unknown>): Mutation => ({
  name: event, path,
  prepare: async () => { const keyId = await newKey(); return { body: await body(keyId), expected: () => one(event, keyId, apiId) }; },
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

const MUTATIONS: Mutation[] = [
  { name: "api.create", path: "/v2/apis.createApi", prepare: async () => ({ body: { name: "audited" }, expected: (d) => one("api.create", d.apiId) }) },
  { name: "api.delete", path: "/v2/apis.deleteApi", prepare: async () => { const id = await createApi(h, "doomed"); return { body: { apiId: id }, expected: () => one("api.delete", id) }; } },
  { name: "key.create", path: "/v2/keys.createKey", prepare: async () => ({ body: { apiId, prefix: "cov", externalId: next("owner"), recoverable: true }, expected: (d) => one("key.create", d.keyId, apiId) }) },
  keyMutation("/v2/keys.updateKey", "key.update", (keyId) => ({ keyId, name: "renamed", meta: { plan: "pro" } })),
  keyMutation("/v2/keys.deleteKey", "key.delete", (keyId) => ({ keyId })),
  keyMutation("/v2/keys.updateCredits", "key.update_credits", (keyId) => ({ keyId, operation: "set", value: 10 })),
  keyMutation("/v2/keys.addPermissions", "key.add_permissions", (keyId) => ({ keyId, permissions: ["created.on.the.fly"] })),
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
    prepare: async () => { const keyId = await newKey(); return { body: { keyId, expiration: 0 }, expected: (d) => one("key.reroll", d.keyId, keyId, apiId) }; },
  },
  { name: "permission.create", path: "/v2/permissions.createPermission", prepare: async () => ({ body: { name: "cov.new", slug: "cov.new" }, expected: (d) => one("permission.create", d.permissionId, "cov.new") }) },
  { name: "permission.delete", path: "/v2/permissions.deletePermission", prepare: async () => { const p = await newPermission(); return { body: { permission: p.id }, expected: () => one("permission.delete", p.id) }; } },
  { name: "role.create", path: "/v2/permissions.createRole", prepare: async () => ({ body: { name: "cov_role", permissions: ["cov.role.perm"] }, expected: (d) => one("role.create", d.roleId, "cov_role", "cov.role.perm") }) },
  { name: "role.delete", path: "/v2/permissions.deleteRole", prepare: async () => { const r = await newRole(); return { body: { role: r.name }, expected: () => one("role.delete", r.id) }; } },
  { name: "identity.create", path: "/v2/identities.createIdentity", prepare: async () => ({ body: { externalId: "cov_user" }, expected: (d) => one("identity.create", d.identityId, "cov_user") }) },
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

interface Row { event: string; actor_type: string; actor_id: string; actor_name: string | null; resources: string; remote_ip: string | null; user_agent: string | null }

const lastRowid = () => h.running.storage.sqlite.query<{ n: number }, []>("SELECT coalesce(max(rowid), 0) AS n FROM audit_logs").get()!.n;
const rowsAfter = (rowid: number) => h.running.storage.sqlite.query<Row, [number]>("SELECT * FROM audit_logs WHERE rowid > ?1 ORDER BY rowid").all(rowid);
const refsOf = (row: Row) => (JSON.parse(row.resources) as Array<{ id: string; name?: string }>).flatMap((r) => [r.id, ...(r.name ? [r.name] : [])]);

beforeAll(async () => {
  h = await startHarness();
  actor = h.running.services.workspaces.createRootKey({ workspace: "default", name: "auditor", permissions: [...ALL_GRANTS] }, { type: "cli", id: "test" });
  secrets.add(h.rootKey).add(actor.key);
  apiId = await createApi(h, "coverage");
});
afterAll(async () => { await h.stop(); });

test("every registered route is in MUTATIONS or READ_ONLY", () => {
  const app = createApp({ services: h.running.services, logger: silentLogger, docsUrl: () => "" });
  const mutating = new Set(MUTATIONS.map((m) => m.path));
  const unclassified = app.routes.filter((r) => r.method === "POST" && !mutating.has(r.path) && !READ_ONLY.has(r.path)).map((r) => r.path);
  expect(unclassified).toEqual([]);
});

describe("API changes: exactly the expected entries, by the calling root key, with remote IP and user agent", () => {
  for (const m of MUTATIONS) {
    test(`${m.path}: ${m.name}`, async () => {
      const { body, expected } = await m.prepare();
      const before = lastRowid();
      const res = await h.post(m.path, body, { key: actor.key, headers: { "x-forwarded-for": `10.0.0.1, ${IP}`, "user-agent": UA } });
      expect(res.status).toBe(200);
      if (typeof res.body.data?.key === "string") secrets.add(res.body.data.key);
      const rows = rowsAfter(before);
      const want = expected(res.body.data);
      expect(rows.map((r) => r.event)).toEqual(want.map((w) => w.event));
      rows.forEach((row, i) => {
        expect({ type: row.actor_type, id: row.actor_id, name: row.actor_name, ip: row.remote_ip, ua: row.user_agent })
          .toEqual({ type: "root_key", id: actor.id, name: "auditor", ip: IP, ua: UA });
        expect(refsOf(row)).toEqual(expect.arrayContaining(want[i]!.refs));
      });
    });
  }
});

describe("CLI changes: actor type cli", () => {
  const cli = { type: "cli" as const, id: "cli", name: "tollgate CLI" };

  test("workspace create and update, root-key create and revoke", () => {
    const before = lastRowid();
    const ws = h.running.services.workspaces.create({ name: "cli-made" }, cli);
    h.running.services.workspaces.setAnalytics(ws.id, true, cli);
    const rk = h.running.services.workspaces.createRootKey({ workspace: ws.id, name: "ops", permissions: ["api.*.read_api"] }, cli);
    secrets.add(rk.key);
    h.running.services.workspaces.revokeRootKey(rk.id, cli);
    const rows = rowsAfter(before);
    expect(rows.map((r) => [r.event, r.actor_type, r.actor_id, r.remote_ip, r.user_agent])).toEqual([
      ["workspace.create", "cli", "cli", null, null],
      ["workspace.update", "cli", "cli", null, null],
      ["root_key.create", "cli", "cli", null, null],
      ["root_key.revoke", "cli", "cli", null, null],
    ]);
    expect(rows.map(refsOf)).toEqual([[ws.id, "cli-made"], [ws.id, "cli-made"], [rk.id, "ops"], [rk.id, "ops"]]);
  });
});

describe("secrets", () => {
  test("no entry holds a key string or a root key", () => {
    const dump = JSON.stringify(h.running.storage.sqlite.query("SELECT * FROM audit_logs").all());
    expect(secrets.size).toBeGreaterThan(MUTATIONS.length / 2);
    expect([...secrets].filter((s) => dump.includes(s))).toEqual([]);
  });
});
