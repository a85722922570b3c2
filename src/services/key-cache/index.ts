/**
 * The verification cache: key snapshots by hash (lru-cache), so a verification of a known key reads
 * no SQLite, and a bounded negative cache of unknown hashes, so a flood of made-up keys cannot reach
 * the database on every request. Every mutation that touches a key, its roles, permissions,
 * identity or API drops the affected entries synchronously, before it answers.
 */
import { LRUCache } from "lru-cache";

/** What the cache needs of a cached value: the id of the key it describes. */
export interface KeyScoped {
  keyId: string;
}

/** What mutations call; the verification cache implements it. */
export interface KeyCacheInvalidator {
  /** One key changed (update, delete, credits, its permissions or roles). */
  keyChanged(keyId: string): void;
  /** Something shared changed (a role, a permission, an identity, an API): drop everything. */
  allChanged(): void;
  /** A new key exists with this hash. */
  keyCreated(hash: string): void;
}

const NEGATIVE_CACHE_SIZE = 100_000;

export class KeyCache<Snapshot extends KeyScoped> implements KeyCacheInvalidator {
  private readonly byHash: LRUCache<string, Snapshot> | undefined;
  private readonly hashByKeyId = new Map<string, string>();
  private readonly unknown = new LRUCache<string, true>({ max: NEGATIVE_CACHE_SIZE });
  /** Lookups answered from the cache (known or known-unknown) and those that had to read SQLite, for /metrics. */
  hits = 0;
  misses = 0;

  /** `size` 0 turns caching of known keys off (every verification reads SQLite). */
  constructor(size: number) {
    this.byHash = size > 0
      ? new LRUCache<string, Snapshot>({ max: size, dispose: (snap) => this.forgetId(snap) })
      : undefined;
  }

  /** The cached snapshot, `null` when the hash is known not to exist, undefined when not cached. */
  get(hash: string): Snapshot | null | undefined {
    const snap = this.byHash?.get(hash);
    if (snap) {
      this.hits++;
      return snap;
    }
    if (this.unknown.has(hash)) {
      this.hits++;
      return null;
    }
    this.misses++;
    return undefined;
  }

  set(hash: string, snap: Snapshot | undefined): void {
    if (!snap) {
      this.unknown.set(hash, true);
      return;
    }
    if (!this.byHash) return;
    this.byHash.set(hash, snap);
    this.hashByKeyId.set(snap.keyId, hash);
  }

  /** A hash remembered as unknown may now exist: forget that it was unknown. */
  keyCreated(hash: string): void {
    this.unknown.delete(hash);
  }

  keyChanged(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash !== undefined) this.byHash?.delete(hash);
  }

  allChanged(): void {
    this.byHash?.clear();
    this.hashByKeyId.clear();
  }

  get size(): number {
    return this.byHash?.size ?? 0;
  }

  private forgetId(snap: Snapshot): void {
    if (this.hashByKeyId.get(snap.keyId) !== undefined) this.hashByKeyId.delete(snap.keyId);
  }
}
