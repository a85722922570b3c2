/**
 * Root keys looked up and not found, remembered by hash so that a flood of one made-up key costs
 * one lookup per TTL instead of one per request. Bounded by entries (a hash and its expiry, about
 * 150 bytes each: 10,000 are about 1.5 MB), least recently used first out; forgotten all at once
 * whenever root keys or workspaces change (RootKeyAuthenticator.invalidate), so a key created after
 * its hash was remembered works at once. The TTL is the clock's, so the tests move it.
 */
import { LRUCache } from "lru-cache";
import type { Clock } from "../../lib/clock.ts";

export class UnknownRootKeys {
  /** hash → the clock's time until which it counts as unknown. */
  private readonly hashes: LRUCache<string, number> | undefined;

  constructor(private readonly opts: { size: number; ttlMs: number; clock: Clock }) {
    this.hashes = opts.size > 0 ? new LRUCache<string, number>({ max: opts.size }) : undefined;
  }

  /** Whether `hash` was looked up, not found, and not forgotten since. */
  has(hash: string): boolean {
    const until = this.hashes?.get(hash);
    if (until === undefined) return false;
    if (until > this.opts.clock.now()) return true;
    this.hashes!.delete(hash);
    return false;
  }

  add(hash: string): void {
    this.hashes?.set(hash, this.opts.clock.now() + this.opts.ttlMs);
  }

  clear(): void {
    this.hashes?.clear();
  }

  get size(): number {
    return this.hashes?.size ?? 0;
  }
}
