/**
 * SDK conformance: every method of the official SDK (`@unkey/api` 2.5) that tollgate serves,
 * called through the SDK against a live tollgate, with its parsed result checked. The method list
 * is read from the SDK's client objects (scope.ts): a method without a case here, or an SDK group
 * or method that is neither served nor listed as out of scope with a reason, fails the suite.
 * The error classes of every method: errors.test.ts and errors-ratelimit-analytics.test.ts; the
 * deeper behaviour of each group: the other files of this folder.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Unkey } from "@unkey/api";
import { startHarness, type Harness } from "../support/harness.ts";
import { sdkClient } from "./client.ts";
import { TEST_ACTOR } from "../support/contract.ts";
import { IN_SCOPE_GROUPS, OUT_OF_SCOPE_GROUPS, OUT_OF_SCOPE_METHODS, sdkSurface, servedMethods, type InScopeGroup } from "./scope.ts";

let h: Harness;
let sdk: Unkey;
let f: { apiId: string; keyId: string; key: string; roleId: string; permissionId: string; identityId: string };
let unique = 0;
const next = (stem: string) => `${stem}_${++unique}`;
const REQ = expect.stringMatching(/^req_/);

beforeAll(async () => {
  h = await startHarness();
  sdk = sdkClient(h, h.rootKey);
  await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  const apiId = (await sdk.apis.createApi({ name: "conformance" })).data.apiId;
  const permissionId = (await sdk.permissions.createPermission({ name: "conf.read", slug: "conf.read" })).data.permissionId;
  const roleId = (await sdk.permissions.createRole({ name: "conf_reader", permissions: ["conf.read"] })).data.roleId;
  const identityId = (await sdk.identities.createIdentity({ externalId: "conf_user" })).data.identityId;
  const { keyId, key } = (await sdk.keys.createKey({ apiId, externalId: "conf_user", credits: { remaining: 100 }, roles: ["conf_reader"] })).data;
  await sdk.ratelimit.limit({ namespace: "conf_ns", identifier: "seed", limit: 10, duration: 60_000 });
  await sdk.ratelimit.setOverride({ namespace: "conf_ns", identifier: "vip", limit: 50, duration: 60_000 });
  f = { apiId, keyId, key, roleId, permissionId, identityId };
});
afterAll(async () => { await h.stop(); });

type Case = () => Promise<void>;
const newKey = async () => (await sdk.keys.createKey({ apiId: f.apiId })).data;

const CASES: Record<InScopeGroup, Record<string, Case>> = {
  apis: {
    createApi: async () => expect((await sdk.apis.createApi({ name: next("api") })).data).toEqual({ apiId: expect.stringMatching(/^api_/) }),
    getApi: async () => expect((await sdk.apis.getApi({ apiId: f.apiId })).data).toEqual({ id: f.apiId, name: "conformance" }),
    listKeys: async () => {
      const page = await sdk.apis.listKeys({ apiId: f.apiId, limit: 100 });
      expect(page.result.data.map((k) => k.keyId)).toContain(f.keyId);
      expect(page.result.meta.requestId).toEqual(REQ);
    },
    deleteApi: async () => {
      const { apiId } = (await sdk.apis.createApi({ name: next("doomed") })).data;
      expect((await sdk.apis.deleteApi({ apiId })).data).toEqual({});
    },
  },
  keys: {
    createKey: async () => expect((await sdk.keys.createKey({ apiId: f.apiId, prefix: "conf" })).data).toEqual({ keyId: expect.stringMatching(/^key_/), key: expect.stringMatching(/^conf_/) }),
    getKey: async () => expect((await sdk.keys.getKey({ keyId: f.keyId })).data).toMatchObject({ keyId: f.keyId, roles: ["conf_reader"], permissions: ["conf.read"] }),
    whoami: async () => expect((await sdk.keys.whoami({ key: f.key })).data).toMatchObject({ keyId: f.keyId, identity: { externalId: "conf_user" } }),
    verifyKey: async () => {
      const res = await sdk.keys.verifyKey({ key: f.key, permissions: "conf.read", credits: { cost: 2 } });
      expect(res.data).toMatchObject({ valid: true, code: "VALID", keyId: f.keyId, permissions: ["conf.read"], roles: ["conf_reader"] });
      expect(typeof res.data.credits).toBe("number");
    },
    updateKey: async () => {
      const { keyId } = await newKey();
      expect((await sdk.keys.updateKey({ keyId, name: "renamed", meta: { plan: "pro" } })).data).toEqual({});
      expect((await sdk.keys.getKey({ keyId })).data).toMatchObject({ name: "renamed", meta: { plan: "pro" } });
    },
    updateCredits: async () => {
      const { keyId } = await newKey();
      expect((await sdk.keys.updateCredits({ keyId, operation: "set", value: 7 })).data).toEqual({ remaining: 7 });
    },
    deleteKey: async () => expect((await sdk.keys.deleteKey({ keyId: (await newKey()).keyId })).data).toEqual({}),
    rerollKey: async () => {
      const { keyId } = await newKey();
      expect((await sdk.keys.rerollKey({ keyId, expiration: 0 })).data).toEqual({ keyId: expect.stringMatching(/^key_/), key: expect.any(String) });
    },
    addPermissions: async () => {
      const res = await sdk.keys.addPermissions({ keyId: (await newKey()).keyId, permissions: ["conf.extra"] });
      expect(res.data).toEqual([{ id: expect.stringMatching(/^perm_/), name: "conf.extra", slug: "conf.extra", description: expect.any(String) }]);
    },
    removePermissions: async () => {
      const { keyId } = await newKey();
      await sdk.keys.addPermissions({ keyId, permissions: ["conf.a", "conf.b"] });
      expect((await sdk.keys.removePermissions({ keyId, permissions: ["conf.a"] })).data.map((p) => p.slug)).toEqual(["conf.b"]);
    },
    setPermissions: async () => expect((await sdk.keys.setPermissions({ keyId: (await newKey()).keyId, permissions: ["conf.read"] })).data.map((p) => p.id)).toEqual([f.permissionId]),
    addRoles: async () => expect((await sdk.keys.addRoles({ keyId: (await newKey()).keyId, roles: ["conf_reader"] })).data).toMatchObject([{ id: f.roleId, name: "conf_reader" }]),
    removeRoles: async () => {
      const { keyId } = await newKey();
      await sdk.keys.addRoles({ keyId, roles: ["conf_reader"] });
      expect((await sdk.keys.removeRoles({ keyId, roles: ["conf_reader"] })).data).toEqual([]);
    },
    setRoles: async () => expect((await sdk.keys.setRoles({ keyId: (await newKey()).keyId, roles: ["conf_reader"] })).data.map((r) => r.id)).toEqual([f.roleId]),
  },
  permissions: {
    createPermission: async () => expect((await sdk.permissions.createPermission({ name: next("conf.p"), slug: next("conf.p") })).data).toEqual({ permissionId: expect.stringMatching(/^perm_/) }),
    getPermission: async () => expect((await sdk.permissions.getPermission({ permission: f.permissionId })).data).toMatchObject({ id: f.permissionId, slug: "conf.read" }),
    listPermissions: async () => expect((await sdk.permissions.listPermissions({ limit: 100 })).result.data.map((p) => p.id)).toContain(f.permissionId),
    deletePermission: async () => {
      const { permissionId } = (await sdk.permissions.createPermission({ name: next("conf.gone"), slug: next("conf.gone") })).data;
      expect((await sdk.permissions.deletePermission({ permission: permissionId })).data).toEqual({});
    },
    createRole: async () => expect((await sdk.permissions.createRole({ name: next("conf_role") })).data).toEqual({ roleId: expect.stringMatching(/^role_/) }),
    getRole: async () => expect((await sdk.permissions.getRole({ role: f.roleId })).data).toMatchObject({ id: f.roleId, name: "conf_reader", permissions: [{ slug: "conf.read" }] }),
    listRoles: async () => expect((await sdk.permissions.listRoles({ limit: 100 })).result.data.map((r) => r.id)).toContain(f.roleId),
    deleteRole: async () => {
      const { roleId } = (await sdk.permissions.createRole({ name: next("conf_gone") })).data;
      expect((await sdk.permissions.deleteRole({ role: roleId })).data).toEqual({});
    },
    setRolePermissions: async () => {
      const { roleId } = (await sdk.permissions.createRole({ name: next("conf_set") })).data;
      expect((await sdk.permissions.setRolePermissions({ roleId, permissions: ["conf.read"] })).meta.requestId).toEqual(REQ);
      expect((await sdk.permissions.getRole({ role: roleId })).data.permissions?.map((p) => p.slug)).toEqual(["conf.read"]);
    },
  },
  identities: {
    createIdentity: async () => expect((await sdk.identities.createIdentity({ externalId: next("conf_ext") })).data).toEqual({ identityId: expect.stringMatching(/^id_/) }),
    getIdentity: async () => expect((await sdk.identities.getIdentity({ identity: "conf_user" })).data).toMatchObject({ id: f.identityId, externalId: "conf_user" }),
    listIdentities: async () => expect((await sdk.identities.listIdentities({ limit: 100 })).result.data.map((i) => i.id)).toContain(f.identityId),
    updateIdentity: async () => expect((await sdk.identities.updateIdentity({ identity: f.identityId, meta: { tier: "gold" } })).data).toMatchObject({ id: f.identityId, meta: { tier: "gold" } }),
    deleteIdentity: async () => {
      const { identityId } = (await sdk.identities.createIdentity({ externalId: next("conf_gone") })).data;
      expect((await sdk.identities.deleteIdentity({ identity: identityId })).meta.requestId).toEqual(REQ);
    },
  },
  ratelimit: {
    limit: async () => expect((await sdk.ratelimit.limit({ namespace: "conf_ns", identifier: next("user"), limit: 3, duration: 60_000 })).data).toMatchObject({ success: true, limit: 3, remaining: 2 }),
    multiLimit: async () => {
      const res = await sdk.ratelimit.multiLimit([{ namespace: "conf_ns", identifier: next("user"), limit: 2, duration: 60_000 }]);
      expect(res.data).toMatchObject({ passed: true, limits: [{ passed: true, limit: 2, remaining: 1 }] });
    },
    setOverride: async () => expect((await sdk.ratelimit.setOverride({ namespace: "conf_ns", identifier: next("ov"), limit: 5, duration: 1000 })).data).toEqual({ overrideId: expect.stringMatching(/^rlor_/) }),
    getOverride: async () => expect((await sdk.ratelimit.getOverride({ namespace: "conf_ns", identifier: "vip" })).data).toMatchObject({ identifier: "vip", limit: 50, duration: 60_000 }),
    listOverrides: async () => expect((await sdk.ratelimit.listOverrides({ namespace: "conf_ns" })).result.data.map((o) => o.identifier)).toContain("vip"),
    deleteOverride: async () => {
      const identifier = next("gone");
      await sdk.ratelimit.setOverride({ namespace: "conf_ns", identifier, limit: 1, duration: 1000 });
      expect((await sdk.ratelimit.deleteOverride({ namespace: "conf_ns", identifier })).data).toEqual({});
    },
  },
  analytics: {
    getVerifications: async () => {
      await sdk.keys.verifyKey({ key: f.key });
      await h.running.services.verificationEvents.flush();
      const res = await sdk.analytics.getVerifications({ query: `SELECT count() AS n FROM key_verifications_v1 WHERE key_id = '${f.keyId}'` });
      expect(res.data).toEqual([{ n: expect.any(Number) }]);
      expect((res.data[0] as { n: number }).n).toBeGreaterThan(0);
    },
  },
};

describe("scope", () => {
  test("every SDK group is served or listed out of scope with a reason", () => {
    const groups = [...sdkSurface().keys()].sort();
    expect(groups).toEqual([...IN_SCOPE_GROUPS, ...Object.keys(OUT_OF_SCOPE_GROUPS)].sort());
  });

  test("every out-of-scope method exists in the SDK (a stale entry would hide nothing)", () => {
    for (const name of Object.keys(OUT_OF_SCOPE_METHODS)) {
      const [group, method] = name.split(".") as [string, string];
      expect(sdkSurface().get(group)).toContain(method);
    }
  });

  test("every served method has a conformance case", () => {
    for (const group of IN_SCOPE_GROUPS) expect({ group, methods: Object.keys(CASES[group]).sort() }).toEqual({ group, methods: servedMethods(group) });
  });
});

for (const group of IN_SCOPE_GROUPS) {
  describe(group, () => {
    for (const [method, run] of Object.entries(CASES[group])) test(`${group}.${method} parses tollgate's answer`, run);
  });
}
