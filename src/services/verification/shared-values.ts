/**
 * Values that many key snapshots hold alike (a permission set with its index, a role list, the ids
 * of a workspace, key space and API, an empty list of limits), kept once and shared: a full key
 * cache then holds several times fewer objects for the garbage collector to walk. Bounded by count
 * and by an estimate of bytes: the least used go first, and snapshots keep what they already
 * share. Snapshots are charged for what they share as if they held it alone (snapshot.ts), so a
 * shared value that no cached snapshot holds any more costs at most this memo's budget.
 */
import { LRUCache } from "lru-cache";

const MAX_SHARED_VALUES = 10_000;

/**
 * Estimated bytes of an entry from its key, the JSON text it was parsed from: the key itself, the
 * parsed strings (up to 2 bytes a character each) and, for a permission set, its index.
 */
const sharedEntryBytes = (key: string): number => 64 + key.length * 6;

export class SharedValues {
  private readonly values: LRUCache<string, object | string>;

  /** `maxBytes` bounds the estimated size of the values kept (at least one byte). */
  constructor(maxBytes: number) {
    this.values = new LRUCache<string, object | string>({
      max: MAX_SHARED_VALUES,
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (_value, key) => sharedEntryBytes(key),
    });
  }

  /** The value known under `key`, else `make()`, kept for the next caller (unless larger than the whole budget). */
  get<T extends object | string>(key: string, make: () => T): T {
    const known = this.values.get(key);
    if (known !== undefined) return known as T;
    const value = make();
    this.values.set(key, value);
    return value;
  }

  /** Estimated bytes of the values kept, for tests. */
  get calculatedSize(): number {
    return this.values.calculatedSize;
  }
}
