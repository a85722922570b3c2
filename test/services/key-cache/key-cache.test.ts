/**
 * The key cache on its own: bounded by count and by estimated bytes (a snapshot too large for its
 * share of the budget is not cached), and a workspace's change drops that workspace's snapshots
 * only, with its indexes kept in step with every eviction.
 */
import { describe, expect, test } from "bun:test";
import { KeyCache, type KeyScoped } from "../../../src/services/key-cache/index.ts";

const snapshot = (keyId: string, workspaceId: string, sizeBytes = 100): KeyScoped => ({ keyId, workspaceId, sizeBytes });

function filled(cache: KeyCache<KeyScoped>, workspaceId: string, count: number, sizeBytes = 100): string[] {
  return Array.from({ length: count }, (_, i) => {
    const hash = `${workspaceId}-hash-${i}`;
    cache.set(hash, snapshot(`${workspaceId}-key-${i}`, workspaceId, sizeBytes));
    return hash;
  });
}

describe("the byte budget", () => {
  test("the estimated bytes held stay within the budget; the least recently used go first", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 16_000 });
    const hashes = filled(cache, "ws_a", 100, 500);
    expect(cache.sizeBytes).toBeLessThanOrEqual(16_000);
    expect(cache.size).toBe(32);
    expect(cache.get(hashes[0]!)).toBeUndefined();
    expect(cache.get(hashes[99]!)).toEqual(snapshot("ws_a-key-99", "ws_a", 500));
  });

  test("a snapshot larger than 1/16 of the budget is not cached, and replaces no cached one", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 16_000 });
    cache.set("small", snapshot("key_small", "ws_a", 1000));
    cache.set("big", snapshot("key_big", "ws_a", 1001));
    expect([cache.get("small")?.keyId, cache.get("big")]).toEqual(["key_small", undefined]);
    expect(cache.sizeBytes).toBe(1000);
  });

  test("a snapshot that outgrows the budget on reload drops its older copy", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 16_000 });
    cache.set("hash", snapshot("key_1", "ws_a", 100));
    cache.set("hash", snapshot("key_1", "ws_a", 5000));
    expect(cache.get("hash")).toBeUndefined();
    cache.workspaceChanged("ws_a");
    expect(cache.size).toBe(0);
  });

  test("the count still bounds small snapshots", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 10, maxBytes: 1_000_000 });
    filled(cache, "ws_a", 50);
    expect(cache.size).toBe(10);
    expect(cache.sizeBytes).toBe(1000);
  });

  test("maxEntries 0 caches no snapshot, but still remembers unknown hashes", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 0, maxBytes: 1_000_000 });
    cache.set("known", snapshot("key_1", "ws_a"));
    cache.set("unknown", undefined);
    expect([cache.get("known"), cache.get("unknown"), cache.size, cache.sizeBytes]).toEqual([undefined, null, 0, 0]);
  });
});

describe("invalidation", () => {
  test("a workspace's change drops its snapshots and no other workspace's", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 1_000_000 });
    const a = filled(cache, "ws_a", 5);
    const b = filled(cache, "ws_b", 5);
    cache.workspaceChanged("ws_a");
    expect(a.map((hash) => cache.get(hash))).toEqual(Array(5).fill(undefined));
    expect(b.map((hash) => cache.get(hash)?.keyId)).toEqual(b.map((_, i) => `ws_b-key-${i}`));
    expect([cache.size, cache.sizeBytes]).toEqual([5, 500]);
  });

  test("a key's change drops that key only", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 1_000_000 });
    const a = filled(cache, "ws_a", 3);
    cache.keyChanged("ws_a-key-1");
    expect(a.map((hash) => cache.get(hash)?.keyId)).toEqual(["ws_a-key-0", undefined, "ws_a-key-2"]);
  });

  test("evicted snapshots leave the indexes: a later change of their key or workspace drops only what is cached", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 4, maxBytes: 1_000_000 });
    filled(cache, "ws_a", 4);
    const b = filled(cache, "ws_b", 2);
    // ws_a-key-0 and -1 were evicted; changing them is a no-op, changing ws_a drops -2 and -3 only.
    cache.keyChanged("ws_a-key-0");
    expect(cache.size).toBe(4);
    cache.workspaceChanged("ws_a");
    expect(cache.size).toBe(2);
    expect(b.map((hash) => cache.get(hash)?.keyId)).toEqual(["ws_b-key-0", "ws_b-key-1"]);
    // Re-caching a key after its workspace was dropped indexes it again.
    cache.set("again", snapshot("ws_a-key-9", "ws_a"));
    cache.workspaceChanged("ws_a");
    expect(cache.get("again")).toBeUndefined();
  });

  test("a reloaded snapshot replaces the old one in the indexes", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 1_000_000 });
    cache.set("hash", snapshot("key_1", "ws_a", 100));
    cache.set("hash", snapshot("key_1", "ws_a", 200));
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

describe("clear (another process committed)", () => {
  test("drops every snapshot and every hash known to be unknown; the indexes start empty", () => {
    const cache = new KeyCache<KeyScoped>({ maxEntries: 1000, maxBytes: 16_000 });
    const hashes = filled(cache, "ws_a", 10);
    cache.set("unknown-hash", undefined);
    cache.clear();
    expect([cache.size, cache.sizeBytes]).toEqual([0, 0]);
    expect(cache.get(hashes[0]!)).toBeUndefined();
    expect(cache.get("unknown-hash")).toBeUndefined();
    cache.set(hashes[0]!, snapshot("ws_a-key-0", "ws_a"));
    cache.workspaceChanged("ws_a");
    expect(cache.get(hashes[0]!)).toBeUndefined();
  });
});
