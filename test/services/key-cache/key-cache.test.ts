/**
 * The key cache on its own: bounded by count and by estimated bytes (a snapshot too large for its
 * share of the budget is not cached).
 */
import { describe, expect, test } from "bun:test";
import { KeyCache, type KeyScoped } from "../../../src/services/key-cache/index.ts";

const snapshot = (keyId: string, sizeBytes = 100): KeyScoped => ({ keyId, sizeBytes });

function filled(cache: KeyCache<KeyScoped>, count: number, sizeBytes = 100): string[] {
  return Array.from({ length: count }, (_, i) => {
    const hash = `hash-${i}`;
    cache.set(hash, snapshot(`key-${i}`, sizeBytes));
    return hash;
  });
}

describe("the byte budget", () => {
  test("the estimated bytes held stay within the budget; the least recently used go first", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 16_000 });
    const hashes = filled(cache, 100, 500);
    expect(cache.sizeBytes).toBeLessThanOrEqual(16_000);
    expect(cache.size).toBe(32);
    expect(cache.get(hashes[0]!)).toBeUndefined();
    expect(cache.get(hashes[99]!)).toEqual(snapshot("key-99", 500));
  });

  test("a snapshot larger than 1/16 of the budget is not cached, and replaces no cached one", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 16_000 });
    cache.set("small", snapshot("key_small", 1000));
    cache.set("big", snapshot("key_big", 1001));
    expect([cache.get("small")?.keyId, cache.get("big")]).toEqual(["key_small", undefined]);
    expect(cache.sizeBytes).toBe(1000);
  });

  test("a snapshot that outgrows the budget on reload drops its older copy", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 16_000 });
    cache.set("hash", snapshot("key_1", 100));
    cache.set("hash", snapshot("key_1", 5000));
    expect([cache.get("hash"), cache.size, cache.sizeBytes]).toEqual([undefined, 0, 0]);
  });

  test("the count still bounds small snapshots", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 10, maxBytes: 1_000_000 });
    filled(cache, 50);
    expect(cache.size).toBe(10);
    expect(cache.sizeBytes).toBe(1000);
  });

  test("maxEntries 0 caches no snapshot, but still remembers unknown hashes", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 0, maxBytes: 1_000_000 });
    cache.set("known", snapshot("key_1"));
    cache.set("unknown", undefined);
    expect([cache.get("known"), cache.get("unknown"), cache.size, cache.sizeBytes]).toEqual([undefined, null, 0, 0]);
  });
});

describe("invalidation", () => {
  test("a key's change drops that key only", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 1_000_000 });
    const a = filled(cache, 3);
    cache.keyChanged("key-1");
    expect(a.map((hash) => cache.get(hash)?.keyId)).toEqual(["key-0", undefined, "key-2"]);
  });

  test("a reloaded snapshot replaces the old one", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 1_000_000 });
    cache.set("hash", snapshot("key_1", 100));
    cache.set("hash", snapshot("key_1", 200));
    expect(cache.sizeBytes).toBe(200);
    cache.keyChanged("key_1");
    expect([cache.get("hash"), cache.size, cache.sizeBytes]).toEqual([undefined, 0, 0]);
  });

  test("a created key's hash is no longer remembered as unknown", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 1_000_000 });
    cache.set("hash", undefined);
    expect(cache.get("hash")).toBeNull();
    cache.keyCreated("hash");
    expect(cache.get("hash")).toBeUndefined();
  });
});
