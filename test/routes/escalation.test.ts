/**
 * No field grants what a dedicated route guards: a root key may give a key permissions or roles
 * through createKey, updateKey and rerollKey only when it holds the `rbac.*` grants that
 * keys.add/set/removePermissions and keys.add/set/removeRoles ask for. A refused request is
 * refused whole: no key, permission, role link or audit entry is written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, expectError, INSUFFICIENT } from "../support/contract.ts";
import { auditRows, countRows, createPermission, createRole, getKey } from "../support/key-management.ts";

let h: Harness;
let apiId: string;
beforeAll(async () => {
  h = await startHarness();
  apiId = await createApi(h, "escalation");
  await createRole(h, "admin", ["everything"]);
  await createPermission(h, "existing.perm");
});
afterAll(async () => { await h.stop(); });

const count = (table: string) => h.records.count(table);

/** Row counts that any write of a refused request would change. */
const footprint = async () => ({
  keys: await count("keys"),
  permissions: await count("permissions"),
  keyPermissions: await count("key_permissions"),
  keyRoles: await count("key_roles"),
  keyCreates: await countRows(h, "audit_logs", "event", "key.create"),
  keyUpdates: await countRows(h, "audit_logs", "event", "key.update"),
  rerolls: await countRows(h, "audit_logs", "event", "key.reroll"),
});

/** The permissions (direct and through roles) and roles a key holds, as getKey with the bootstrap key shows them, sorted. */
async function access(keyId: string): Promise<{ permissions: string[]; roles: string[] }> {
  const view = await getKey(h, keyId);
  return { permissions: [...(view.permissions ?? [])].sort(), roles: [...(view.roles ?? [])].sort() };
}

const CREATE_KEY = "api.*.create_key";
const UPDATE_KEY = "api.*.update_key";
const RBAC = (action: string) => `rbac.*.${action}`;

describe("keys.createKey", () => {
  test.each([
    ["permissions, with create_key alone", { permissions: ["existing.perm"] }, [CREATE_KEY], "add_permission_to_key"],
    ["roles, with create_key alone", { roles: ["admin"] }, [CREATE_KEY], "add_role_to_key"],
    ["a permission that does not exist yet, without create_permission", { permissions: ["brand.new"] }, [CREATE_KEY, RBAC("add_permission_to_key")], "create_permission"],
  ])("403: %s, naming the grant; no key, permission or audit entry", async (_name, fields, grants, missing) => {
    const before = await footprint();
    const res = await h.post("/v2/keys.createKey", { apiId, ...fields }, { key: await h.rootKeyWith(grants) });
    expectError(h, res, 403, INSUFFICIENT, `Missing permission: 'rbac.*.${missing}'`);
    expect(await footprint()).toEqual(before);
  });

  test.each([
    ["permissions, with create_key and add_permission_to_key", { permissions: ["existing.perm"] }, [CREATE_KEY, RBAC("add_permission_to_key")], ["existing.perm"], []],
    ["new permissions, with create_permission as well", { permissions: ["created.on.the.fly"] }, [CREATE_KEY, RBAC("add_permission_to_key"), RBAC("create_permission")], ["created.on.the.fly"], []],
    ["roles, with create_key and add_role_to_key", { roles: ["admin"] }, [CREATE_KEY, RBAC("add_role_to_key")], ["everything"], ["admin"]],
    ["empty lists, with create_key alone", { permissions: [], roles: [] }, [CREATE_KEY], [], []],
  ])("200: %s", async (_name, fields, grants, permissions, roles) => {
    const { keyId } = await createKey(h, { apiId, ...fields }, await h.rootKeyWith(grants));
    expect(await access(keyId)).toEqual({ permissions, roles });
  });
});

describe("keys.updateKey (the lists replace the key's set, so they need add and remove)", () => {
  const withAll = [UPDATE_KEY, RBAC("add_permission_to_key"), RBAC("remove_permission_from_key"), RBAC("add_role_to_key"), RBAC("remove_role_from_key")];
  const without = (grant: string) => withAll.filter((g) => g !== grant);

  test.each([
    ["roles, with update_key alone", { roles: ["admin"] }, [UPDATE_KEY], "add_role_to_key"],
    ["roles, without remove_role_from_key", { roles: ["admin"] }, without(RBAC("remove_role_from_key")), "remove_role_from_key"],
    ["roles: [], without remove_role_from_key", { roles: [] }, without(RBAC("remove_role_from_key")), "remove_role_from_key"],
    ["permissions, with update_key alone", { permissions: ["existing.perm"] }, [UPDATE_KEY], "add_permission_to_key"],
    ["permissions, without remove_permission_from_key", { permissions: ["existing.perm"] }, without(RBAC("remove_permission_from_key")), "remove_permission_from_key"],
    ["a permission that does not exist yet, without create_permission", { permissions: ["another.new"] }, withAll, "create_permission"],
  ])("403: %s, naming the grant; the whole update is refused and nothing is audited", async (_name, fields, grants, missing) => {
    const { keyId } = await createKey(h, { apiId, name: "unchanged", permissions: ["kept.perm"] });
    const before = { view: await getKey(h, keyId), footprint: await footprint() };
    const res = await h.post("/v2/keys.updateKey", { keyId, name: "changed", ...fields }, { key: await h.rootKeyWith(grants) });
    expectError(h, res, 403, INSUFFICIENT, `Missing permission: 'rbac.*.${missing}'`);
    expect({ view: await getKey(h, keyId), footprint: await footprint() }).toEqual(before);
    expect(await auditRows(h, "key.update", keyId)).toEqual([]);
  });

  test.each([
    ["roles, with update_key, add_role_to_key and remove_role_from_key", { roles: ["admin"] }, [UPDATE_KEY, RBAC("add_role_to_key"), RBAC("remove_role_from_key")], ["everything", "kept.perm"], ["admin"]],
    ["permissions, with update_key, add_permission_to_key and remove_permission_from_key", { permissions: ["existing.perm"] }, [UPDATE_KEY, RBAC("add_permission_to_key"), RBAC("remove_permission_from_key")], ["existing.perm"], []],
    ["new permissions, with create_permission as well", { permissions: ["made.by.update"] }, [...withAll, RBAC("create_permission")], ["made.by.update"], []],
    ["other fields, with update_key alone", { name: "renamed", credits: { remaining: 5 }, ratelimits: [{ name: "per_minute", limit: 1, duration: 60_000, autoApply: false }] }, [UPDATE_KEY], ["kept.perm"], []],
  ])("200: %s", async (_name, fields, grants, permissions, roles) => {
    const { keyId } = await createKey(h, { apiId, permissions: ["kept.perm"] });
    const res = await h.post("/v2/keys.updateKey", { keyId, ...fields }, { key: await h.rootKeyWith(grants) });
    expect(res.status).toBe(200);
    expect(await access(keyId)).toEqual({ permissions, roles });
  });
});

describe("keys.rerollKey (the copy holds the old key's permissions and roles)", () => {
  test.each([
    ["direct permissions, with create_key alone", { permissions: ["existing.perm"] }, [CREATE_KEY], "add_permission_to_key"],
    ["roles, with create_key alone", { roles: ["admin"] }, [CREATE_KEY], "add_role_to_key"],
    ["both, without add_role_to_key", { permissions: ["existing.perm"], roles: ["admin"] }, [CREATE_KEY, RBAC("add_permission_to_key")], "add_role_to_key"],
  ])("403: a key holding %s, naming the grant; no new key, the old one unchanged", async (_name, fields, grants, missing) => {
    const { keyId } = await createKey(h, { apiId, ...fields });
    const before = { view: await getKey(h, keyId), footprint: await footprint() };
    const res = await h.post("/v2/keys.rerollKey", { keyId, expiration: 0 }, { key: await h.rootKeyWith(grants) });
    expectError(h, res, 403, INSUFFICIENT, `Missing permission: 'rbac.*.${missing}'`);
    expect({ view: await getKey(h, keyId), footprint: await footprint() }).toEqual(before);
  });

  test.each([
    ["no permissions or roles, with create_key alone (upstream's grant)", {}, [CREATE_KEY], [], []],
    ["both, with create_key, add_permission_to_key and add_role_to_key", { permissions: ["existing.perm"], roles: ["admin"] }, [CREATE_KEY, RBAC("add_permission_to_key"), RBAC("add_role_to_key")], ["everything", "existing.perm"], ["admin"]],
  ])("200: a key holding %s; the new key holds the same", async (_name, fields, grants, permissions, roles) => {
    const { keyId } = await createKey(h, { apiId, ...fields });
    const res = await h.post("/v2/keys.rerollKey", { keyId, expiration: 0 }, { key: await h.rootKeyWith(grants) });
    expect(res.status).toBe(200);
    expect(await access(res.body.data.keyId)).toEqual({ permissions, roles });
  });
});
