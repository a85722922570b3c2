/**
 * The verification cache in a running service: bounded by TOLLGATE_KEY_CACHE_MB while keys with a
 * large meta are verified (small keys still cached).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey } from "../support/contract.ts";
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
