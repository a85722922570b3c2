/**
 * The verification cache in a running service: bounded by TOLLGATE_KEY_CACHE_MB while keys with a
 * large meta are verified (small keys still cached), and a change to one workspace's roles,
 * permissions, identities or APIs drops that workspace's cached keys only: another workspace's key
 * stays a cache hit, while the changed workspace's next verification sees the change.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, createRole, otherWorkspaceRootKey } from "../support/contract.ts";
import { verify } from "../support/key-management.ts";

/** Cache hits and misses while `fn` runs. */
async function lookups(h: Harness, fn: () => Promise<unknown>): Promise<{ hits: number; misses: number }> {
  const cache = h.running.services.keyCache;
  const [hits, misses] = [cache.hits, cache.misses];
  await fn();
  return { hits: cache.hits - hits, misses: cache.misses - misses };
}

describe("TOLLGATE_KEY_CACHE_MB=1", () => {
  let h: Harness;
  let apiId: string;
  beforeAll(async () => {
    h = await startHarness({ env: { TOLLGATE_KEY_CACHE_MB: "1" } });
    apiId = await createApi(h, "cache-bytes");
  });
  afterAll(() => h.stop());

  test("keys with a large meta are cached within the budget, and small keys are still cached", async () => {
    const meta = (i: number) => ({ i, blob: "m".repeat(20_000) });
    const big = await Promise.all(Array.from({ length: 40 }, (_, i) => createKey(h, { apiId, meta: meta(i) })));
    for (const [i, k] of big.entries()) expect((await verify(h, k.key)).meta).toEqual(meta(i));
    const cache = h.running.services.keyCache;
    // Snapshots get 7/8 of the budget (the values they share the rest).
    expect(cache.sizeBytes).toBeLessThanOrEqual(1024 * 1024 * 7 / 8);
    expect(cache.size).toBeGreaterThan(10);
    expect(cache.size).toBeLessThan(40);
    const small = await createKey(h, { apiId, meta: { plan: "pro" } });
    expect(await lookups(h, () => verify(h, small.key))).toEqual({ hits: 0, misses: 1 });
    expect(await lookups(h, () => verify(h, small.key))).toEqual({ hits: 1, misses: 0 });
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    const bytes = Number(/^tollgate_key_cache_bytes (\d+)$/m.exec(metrics)?.[1]);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(1024 * 1024);
  });

  test("a key larger than 1/16 of the budget is answered in full every time, from SQLite", async () => {
    const meta = { blob: "h".repeat(60_000) };
    const huge = await createKey(h, { apiId, meta });
    for (let i = 0; i < 2; i++) {
      let data: any;
      expect(await lookups(h, async () => { data = await verify(h, huge.key); })).toEqual({ hits: 0, misses: 1 });
      expect(data.meta).toEqual(meta);
    }
  });
});

describe("a change to one workspace drops that workspace's cached keys only", () => {
  let h: Harness;
  let other: { rootKey: string; key: string };
  beforeAll(async () => {
    h = await startHarness();
    const rootKey = await otherWorkspaceRootKey(h, "other-ws");
    const otherApi = await createApi(h, "other-api", rootKey);
    other = { rootKey, key: (await createKey(h, { apiId: otherApi, meta: { ws: "other" } }, rootKey)).key };
  });
  afterAll(() => h.stop());

  /** Verifies the other workspace's key (cached), makes a change in the default workspace, and checks the other key is still a cache hit. */
  async function otherStaysCached(path: string, body: Record<string, unknown>): Promise<void> {
    await h.post("/v2/keys.verifyKey", { key: other.key }, { key: other.rootKey });
    expect((await h.post(path, body)).status).toBe(200);
    const seen = await lookups(h, async () => {
      const res = await h.post("/v2/keys.verifyKey", { key: other.key }, { key: other.rootKey });
      expect(res.body.data).toMatchObject({ valid: true, meta: { ws: "other" } });
    });
    expect(seen).toEqual({ hits: 1, misses: 0 });
  }

  /** A fresh API, role (holding docs.read), identity and key of the default workspace, the key verified once (cached). */
  async function subject(name: string) {
    const apiId = await createApi(h, `${name}-api`);
    await createRole(h, `${name}.role`, [`${name}.read`]);
    await h.post("/v2/identities.createIdentity", { externalId: `${name}_user`, meta: { tier: "gold" } });
    const { key } = await createKey(h, { apiId, roles: [`${name}.role`], externalId: `${name}_user` });
    expect(await verify(h, key, { permissions: `${name}.read` })).toMatchObject({ code: "VALID", identity: { meta: { tier: "gold" } } });
    return { apiId, key };
  }

  test("setRolePermissions", async () => {
    const { key } = await subject("setrole");
    await otherStaysCached("/v2/permissions.setRolePermissions", { roleId: "setrole.role", permissions: ["setrole.write"] });
    expect((await verify(h, key, { permissions: "setrole.read" })).code).toBe("INSUFFICIENT_PERMISSIONS");
    expect((await verify(h, key, { permissions: "setrole.write" })).code).toBe("VALID");
  });

  test("deletePermission", async () => {
    const { key } = await subject("delperm");
    await otherStaysCached("/v2/permissions.deletePermission", { permission: "delperm.read" });
    expect((await verify(h, key, { permissions: "delperm.read" })).code).toBe("INSUFFICIENT_PERMISSIONS");
  });

  test("deleteRole", async () => {
    const { key } = await subject("delrole");
    await otherStaysCached("/v2/permissions.deleteRole", { role: "delrole.role" });
    const data = await verify(h, key, { permissions: "delrole.read" });
    expect([data.code, data.roles]).toEqual(["INSUFFICIENT_PERMISSIONS", undefined]);
  });

  test("updateIdentity", async () => {
    const { key } = await subject("updident");
    await otherStaysCached("/v2/identities.updateIdentity", { identity: "updident_user", meta: { tier: "silver" } });
    expect((await verify(h, key)).identity.meta).toEqual({ tier: "silver" });
  });

  test("deleteIdentity", async () => {
    const { key } = await subject("delident");
    await otherStaysCached("/v2/identities.deleteIdentity", { identity: "delident_user" });
    expect((await verify(h, key)).identity).toBeUndefined();
  });

  test("deleteApi", async () => {
    const { apiId, key } = await subject("delapi");
    await otherStaysCached("/v2/apis.deleteApi", { apiId });
    expect(await verify(h, key)).toEqual({ valid: false, code: "NOT_FOUND" });
  });
});
