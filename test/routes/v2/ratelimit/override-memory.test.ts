/**
 * Overrides and the namespace cache's bytes through the API (TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB
 * = 1, so a workspace may use 1 MiB and a namespace's overrides 32 KiB): a root key holding only
 * set_override stores more overrides than that in several namespaces; checks find every one, the
 * cache stays within its bytes, and another workspace's cached namespaces are not given up.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { otherWorkspaceRootKey } from "../../../support/contract.ts";
import { createNamespace, MINUTE } from "./support.ts";

const MIB = 1024 * 1024;
let h: Harness;
let setter: string;
let keyB: string;
beforeAll(async () => {
  h = await startHarness({ env: { TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB: "1" } });
  setter = await h.rootKeyWith(["ratelimit.*.set_override"]);
  keyB = await otherWorkspaceRootKey(h, "nsmem-b");
});
afterAll(async () => { await h.stop(); });

const limitOf = async (namespace: string, identifier: string, key?: string) => {
  const res = await h.post("/v2/ratelimit.limit", { namespace, identifier, limit: 100, duration: MINUTE, cost: 0 }, key === undefined ? {} : { key });
  expect(res.status).toBe(200);
  return res.body.data as { limit: number; overrideId?: string };
};
const stats = (workspaceId?: string) => h.running.services.ratelimits.namespaceCacheStats(workspaceId);
const LONG = "x".repeat(400);

test("200: a namespace with more overrides than its share finds each of them, and the cache holds its wildcard only", async () => {
  const ns = await createNamespace(h);
  const ids = new Map<number, string>();
  for (let i = 0; i < 150; i++) {
    const res = await h.post("/v2/ratelimit.setOverride", { namespace: ns, identifier: `u${i}-${LONG}`, limit: 1000 + i, duration: MINUTE }, { key: setter });
    expect(res.status).toBe(200);
    ids.set(i, res.body.data.overrideId);
  }
  await h.post("/v2/ratelimit.setOverride", { namespace: ns, identifier: "u*", limit: 7, duration: MINUTE }, { key: setter });
  for (const i of [0, 77, 149]) expect(await limitOf(ns, `u${i}-${LONG}`)).toEqual(expect.objectContaining({ limit: 1000 + i, overrideId: ids.get(i) }));
  expect((await limitOf(ns, "u-someone-else")).limit).toBe(7);
  // Far below the 150 long overrides' charge: the namespace and its wildcard.
  expect(stats().bytes).toBeLessThan(4096);

  await h.restart();
  expect((await limitOf(ns, `u149-${LONG}`)).limit).toBe(1149);
  expect((await limitOf(ns, "u-someone-else")).limit).toBe(7);
  expect(stats().bytes).toBeLessThan(4096);
});

describe("the cache's bytes", () => {
  test("many namespaces with many overrides stay within a workspace's MiB; the other workspace's namespaces stay cached", async () => {
    const nsB = "api";
    await limitOf(nsB, "bootstrap", keyB);
    await h.post("/v2/ratelimit.setOverride", { namespace: nsB, identifier: "vip", limit: 42, duration: MINUTE }, { key: keyB });
    expect((await limitOf(nsB, "vip", keyB)).limit).toBe(42);
    const workspaceB = (await h.records.rows<{ id: string }>("SELECT id FROM workspaces WHERE name = 'nsmem-b'"))[0]!.id;
    const cachedB = stats(workspaceB);
    expect(cachedB.entries).toBe(1);

    for (let n = 0; n < 40; n++) {
      const ns = await createNamespace(h, `many-${n}-${LONG}`);
      for (let i = 0; i < 20; i++) await h.post("/v2/ratelimit.setOverride", { namespace: ns, identifier: `id${i}-${LONG}`, limit: i + 1, duration: MINUTE }, { key: setter });
      expect((await limitOf(ns, `id19-${LONG}`)).limit).toBe(20);
      expect(stats().bytes).toBeLessThanOrEqual(MIB);
    }
    // Some of the default workspace's 41 namespaces were given up to stay within its MiB, none of ws B's.
    expect(stats().entries).toBeLessThan(41 + 1);
    expect(stats(workspaceB)).toEqual(cachedB);
    expect((await limitOf(nsB, "vip", keyB)).limit).toBe(42);
  });
});
