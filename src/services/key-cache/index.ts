/**
 * The verification cache: key snapshots by hash (lru-cache), so a verification of a known key reads
 * no SQLite, and a bounded negative cache of unknown hashes, so a flood of made-up keys cannot reach
 * the database on every request. Every mutation that touches a key, its roles, permissions,
 * identity or API drops the affected entries synchronously, before it answers.
 *
 * Snapshots are bounded by count and by their estimated bytes (a key with a megabyte of meta is a
 * thousand small ones). A change to what a workspace's keys share (a role, a permission, an
 * identity, an API) drops that workspace's snapshots only, found through an index kept in step
 * with lru-cache's dispose, so its cost is the workspace's entries, never a walk of the cache.
 */
import { LRUCache } from "lru-cache";

/** What the cache needs of a cached value: the key and workspace it describes, and its estimated size. */
export interface KeyScoped {
  keyId: string;
  workspaceId: string;
  sizeBytes: number;
}

/** What mutations call; the verification cache implements it. */
export interface KeyCacheInvalidator {
  /** One key changed (update, delete, credits, its permissions or roles). */
  keyChanged(keyId: string): void;
  /** Something a workspace's keys share changed (a role, a permission, an identity, an API): drop that workspace's keys. */
  workspaceChanged(workspaceId: string): void;
  /** A new key exists with this hash. */
  keyCreated(hash: string): void;
}

export interface KeyCacheLimits {
  /** Snapshots kept at most; 0 turns caching of known keys off (every verification reads SQLite). */
  maxEntries: number;
  /** Estimated bytes of snapshots kept at most. */
  maxBytes: number;
}

/**
 * The negative cache holds only base64 SHA-256 hashes (44 characters) and `true`, so its count
 * bounds its bytes as well: a caller cannot make one entry larger than another.
 */
const NEGATIVE_CACHE_SIZE = 100_000;

/** A snapshot larger than this share of the byte budget is not cached: it would push out many small ones. */
const MAX_ENTRY_SHARE = 1 / 16;

export class KeyCache<Snapshot extends KeyScoped> implements KeyCacheInvalidator {
  private readonly byHash: LRUCache<string, Snapshot> | undefined;
  private readonly hashByKeyId = new Map<string, string>();
  private readonly hashesByWorkspace = new Map<string, Set<string>>();
  private readonly unknown = new LRUCache<string, true>({ max: NEGATIVE_CACHE_SIZE });
  private dropCount = 0;
  /** Lookups answered from the cache (known or known-unknown) and those that had to read SQLite, for /metrics. */
  hits = 0;
  misses = 0;

  constructor(limits: KeyCacheLimits) {
    this.byHash = limits.maxEntries > 0
      ? new LRUCache<string, Snapshot>({
        max: limits.maxEntries,
        maxSize: Math.max(1, limits.maxBytes),
        maxEntrySize: Math.max(1, Math.floor(limits.maxBytes * MAX_ENTRY_SHARE)),
        sizeCalculation: (snap) => Math.max(1, snap.sizeBytes),
        dispose: (snap, hash) => this.forget(snap, hash),
      })
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

  /** Caches a snapshot (not one too large for the budget), or remembers that no key has this hash. */
  set(hash: string, snap: Snapshot | undefined): void {
    if (!snap) {
      this.unknown.set(hash, true);
      return;
    }
    if (!this.byHash) return;
    // A replaced snapshot is disposed of (and unindexed) inside set(), before this one is indexed.
    this.byHash.set(hash, snap);
    if (!this.byHash.has(hash)) return;
    this.hashByKeyId.set(snap.keyId, hash);
    let hashes = this.hashesByWorkspace.get(snap.workspaceId);
    if (hashes === undefined) {
      hashes = new Set();
      this.hashesByWorkspace.set(snap.workspaceId, hashes);
    }
    hashes.add(hash);
  }

  /** Keys may have been created elsewhere (another node): forget every hash remembered as unknown. */
  forgetUnknown(): void {
    this.unknown.clear();
  }

  /** A hash remembered as unknown may now exist: forget that it was unknown. */
  keyCreated(hash: string): void {
    this.unknown.delete(hash);
  }

  /** Counts drops (of a key, a workspace, everything): a load that began before one must not be cached. */
  get drops(): number {
    return this.dropCount;
  }

  keyChanged(keyId: string): void {
    this.dropCount++;
    const hash = this.hashByKeyId.get(keyId);
    if (hash !== undefined) this.byHash?.delete(hash);
  }

  workspaceChanged(workspaceId: string): void {
    this.dropCount++;
    const hashes = this.hashesByWorkspace.get(workspaceId);
    if (hashes === undefined) return;
    // Each delete disposes of its snapshot, which takes the hash out of `hashes`: walk a copy.
    for (const hash of [...hashes]) this.byHash?.delete(hash);
  }

  /** Anything stored may have changed (another process committed): drop every snapshot and every unknown hash. */
  clear(): void {
    this.dropCount++;
    this.byHash?.clear();
    this.hashByKeyId.clear();
    this.hashesByWorkspace.clear();
    this.unknown.clear();
  }

  /** Snapshots cached. */
  get size(): number {
    return this.byHash?.size ?? 0;
  }

  /** Their estimated bytes, at most the byte budget. */
  get sizeBytes(): number {
    return this.byHash?.calculatedSize ?? 0;
  }

  private forget(snap: Snapshot, hash: string): void {
    if (this.hashByKeyId.get(snap.keyId) === hash) this.hashByKeyId.delete(snap.keyId);
    const hashes = this.hashesByWorkspace.get(snap.workspaceId);
    if (hashes === undefined) return;
    hashes.delete(hash);
    if (hashes.size === 0) this.hashesByWorkspace.delete(snap.workspaceId);
  }
}
