/**
 * Where the limiter finds a counter's slot: (scope, identifier) → slot number.
 *
 * A scope is what many counters share: a namespace (or the key limits of a workspace) and a window
 * length; it belongs to one workspace, whose id its key starts with. Scopes get small integer ids,
 * so a counter is (scope id, identifier) and no composite string is built or kept per counter. The
 * identifier string is the one object held per counter.
 *
 * Memory: with a million live counters the per-entry cost dominates, so the index is an
 * open-addressing hash table in one Int32Array (linear probing, at most half full, backward-shift
 * deletion, no tombstones) and every per-slot fact sits in a typed-array column. A JS Map costs
 * several times more per entry and varies with its growth history.
 */

import type { WorkspaceWindows } from "./workspace-windows.ts";

const INITIAL_SLOTS = 1024;
const EMPTY = 0;

export interface Scope {
  id: number;
  /** Opaque to the limiter; the service composes it (e.g. `${workspaceId}|${namespaceId}`). */
  key: string;
  durationMs: number;
  workspace: WorkspaceWindows;
  /** Live counters in this scope; at 0 the scope is forgotten. */
  live: number;
}

/** Scope ids by (durationMs, key); ids of forgotten scopes are reused. */
export class ScopeRegistry {
  private readonly byDuration = new Map<number, Map<string, Scope>>();
  private readonly byId: (Scope | undefined)[] = [];
  private readonly freeIds: number[] = [];

  find(key: string, durationMs: number): Scope | undefined {
    return this.byDuration.get(durationMs)?.get(key);
  }

  /** Adds a scope that `find` does not know. */
  create(key: string, durationMs: number, workspace: WorkspaceWindows): Scope {
    const scope: Scope = { id: this.freeIds.pop() ?? this.byId.length, key, durationMs, workspace, live: 0 };
    this.byId[scope.id] = scope;
    let byKey = this.byDuration.get(durationMs);
    if (byKey === undefined) {
      byKey = new Map();
      this.byDuration.set(durationMs, byKey);
    }
    byKey.set(key, scope);
    return scope;
  }

  get(id: number): Scope {
    const scope = this.byId[id];
    if (scope === undefined) throw new Error(`no scope ${id}`);
    return scope;
  }

  /** Forgets a scope that has no live counter left. */
  release(scope: Scope): void {
    const byKey = this.byDuration.get(scope.durationMs);
    byKey?.delete(scope.key);
    if (byKey?.size === 0) this.byDuration.delete(scope.durationMs);
    this.byId[scope.id] = undefined;
    this.freeIds.push(scope.id);
  }
}

/**
 * FNV-1a over the UTF-16 code units, started from a per-table random seed mixed with the scope id.
 * Identifiers come from clients; the random start keeps a list of colliding identifiers from being
 * precomputed, so a client cannot turn lookups into long probe runs.
 */
function hashOf(seed: number, scopeId: number, identifier: string): number {
  let h = (seed ^ Math.imul(scopeId + 1, 0x9e3779b1)) | 0;
  for (let i = 0; i < identifier.length; i++) h = Math.imul(h ^ identifier.charCodeAt(i), 0x01000193);
  return h;
}

export class CounterTable {
  private readonly seed = crypto.getRandomValues(new Int32Array(1))[0]!;
  /** Position → slot + 1; 0 is an empty position. Length is a power of two. */
  private index = new Int32Array(INITIAL_SLOTS * 2);
  private mask = this.index.length - 1;
  private hashes = new Int32Array(INITIAL_SLOTS);
  private scopeIds = new Int32Array(INITIAL_SLOTS);
  private readonly identifiers: (string | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;
  private live = 0;

  /** Live counters. */
  get size(): number {
    return this.live;
  }

  /** Every slot ever handed out is below this; free slots among them hold no identifier. */
  get slotBound(): number {
    return this.nextSlot;
  }

  /** Length of the per-slot columns; the limiter sizes its own columns by it. */
  get capacity(): number {
    return this.hashes.length;
  }

  /** The slot of (scope, identifier), or -1. */
  find(scopeId: number, identifier: string): number {
    const hash = hashOf(this.seed, scopeId, identifier);
    for (let pos = hash & this.mask; ; pos = (pos + 1) & this.mask) {
      const entry = this.index[pos]!;
      if (entry === EMPTY) return -1;
      const slot = entry - 1;
      if (this.hashes[slot] === hash && this.scopeIds[slot] === scopeId && this.identifiers[slot] === identifier) return slot;
    }
  }

  /** Adds a counter that `find` does not know; returns its slot. */
  insert(scopeId: number, identifier: string): number {
    const slot = this.freeSlots.pop() ?? this.nextSlot++;
    if (slot >= this.hashes.length) this.growColumns();
    const hash = hashOf(this.seed, scopeId, identifier);
    this.hashes[slot] = hash;
    this.scopeIds[slot] = scopeId;
    this.identifiers[slot] = identifier;
    this.live++;
    if (this.live * 2 > this.index.length) this.growIndex();
    else this.place(slot, hash);
    return slot;
  }

  /** Removes a live slot; its number may be handed out again. */
  remove(slot: number): void {
    let hole = this.positionOf(slot);
    // Backward-shift deletion: move later entries of the probe run into the hole when their home allows.
    for (let pos = (hole + 1) & this.mask; this.index[pos] !== EMPTY; pos = (pos + 1) & this.mask) {
      const home = this.hashes[this.index[pos]! - 1]! & this.mask;
      const movable = hole <= pos ? home <= hole || home > pos : home <= hole && home > pos;
      if (movable) {
        this.index[hole] = this.index[pos]!;
        hole = pos;
      }
    }
    this.index[hole] = EMPTY;
    this.identifiers[slot] = undefined;
    this.freeSlots.push(slot);
    this.live--;
  }

  identifierOf(slot: number): string | undefined {
    return this.identifiers[slot];
  }

  scopeIdOf(slot: number): number {
    return this.scopeIds[slot]!;
  }

  private positionOf(slot: number): number {
    for (let pos = this.hashes[slot]! & this.mask; ; pos = (pos + 1) & this.mask) {
      const entry = this.index[pos]!;
      if (entry === slot + 1) return pos;
      if (entry === EMPTY) throw new Error(`slot ${slot} is not in the index`);
    }
  }

  private place(slot: number, hash: number): void {
    let pos = hash & this.mask;
    while (this.index[pos] !== EMPTY) pos = (pos + 1) & this.mask;
    this.index[pos] = slot + 1;
  }

  private growColumns(): void {
    const length = this.hashes.length * 2;
    const hashes = new Int32Array(length);
    hashes.set(this.hashes);
    this.hashes = hashes;
    const scopeIds = new Int32Array(length);
    scopeIds.set(this.scopeIds);
    this.scopeIds = scopeIds;
  }

  /** Doubles the index and re-places every live slot from its stored hash. */
  private growIndex(): void {
    this.index = new Int32Array(this.index.length * 2);
    this.mask = this.index.length - 1;
    for (let slot = 0; slot < this.nextSlot; slot++) {
      if (this.identifiers[slot] !== undefined) this.place(slot, this.hashes[slot]!);
    }
  }
}
