/**
 * In-memory sliding-window rate limiter (upstream §6.2): two epoch-aligned fixed windows, the
 * previous one weighted by the part of it still inside the sliding window.
 *
 * Invariants:
 * - A denied check consumes nothing; a batch (`checkAll`) commits every cost or none.
 * - Counts are integers: the weighted previous count is floored before it is added, as upstream
 *   does, so `remaining` is always an integer.
 * - State is per (scope, durationMs, identifier); another duration is another window.
 *
 * Memory: with a million live counters the per-entry cost dominates, so an entry is a slot in
 * typed-array columns (no object per entry): its windows here, its identity in CounterTable.
 */
import type { Clock } from "../../lib/clock.ts";
import { CounterTable, ScopeRegistry, type Scope } from "./counter-table.ts";

export interface LimitRequest {
  /**
   * What many counters share (a namespace, a workspace's key limits…), composed by the caller and
   * opaque here. Pass the same string object for every request of a scope when possible: its hash
   * is then computed once.
   */
  scope: string;
  /** Who is limited within the scope. */
  identifier: string;
  /** Maximum effective count per window; 0 denies any cost > 0. */
  limit: number;
  /** Window length in ms, >= 1. */
  durationMs: number;
  /** Integer >= 0; 0 consumes nothing and just reports. */
  cost: number;
}

export interface LimitResult {
  success: boolean;
  limit: number;
  remaining: number;
  /** End of the current fixed window, Unix ms. */
  resetMs: number;
}

export interface BatchResult {
  success: boolean;
  results: LimitResult[];
}

/** One counter's stored state; `previousCount` belongs to the window before `windowStartMs`. */
export interface WindowRow {
  scope: string;
  durationMs: number;
  identifier: string;
  windowStartMs: number;
  count: number;
  previousCount: number;
}

// Slot layout in `state`: [windowStartMs, count, previousCount]; the duration is the scope's.
const STRIDE = 3;

/** What a counter looks like at a given instant, before this check's cost. */
interface Evaluation {
  resetMs: number;
  /** Current count + floored weighted previous count + costs of earlier items of the batch. */
  usedBefore: number;
  passed: boolean;
}

/** A counter's windows as of an instant, derived from its slot without changing it. */
interface Windows {
  startMs: number;
  current: number;
  previous: number;
}

export class SlidingWindowLimiter {
  private readonly clock: Clock;
  private readonly scopes = new ScopeRegistry();
  private readonly table = new CounterTable();
  private state = new Float64Array(0);
  /** 1 for a slot changed since the last `takeDirty`. */
  private dirty = new Uint8Array(0);
  private dirtyCount = 0;

  constructor(deps: { clock: Clock }) {
    this.clock = deps.clock;
    this.fitColumns();
  }

  /** Live entries (counters with state in memory). */
  get size(): number {
    return this.table.size;
  }

  /** Every live slot is below this (for a walk over all windows). */
  get slotBound(): number {
    return this.table.slotBound;
  }

  /** Checks one limit and, if it passes, charges its cost. */
  check(req: LimitRequest): LimitResult {
    const nowMs = this.clock.now();
    const scope = this.scopes.find(req.scope, req.durationMs);
    const slot = scope === undefined ? -1 : this.table.find(scope.id, req.identifier);
    const ev = this.evaluate(req, slot, nowMs, 0);
    if (!ev.passed) return denied(req, ev);
    if (req.cost > 0) this.charge(req, nowMs, slot);
    return { success: true, limit: req.limit, remaining: floorRemaining(req.limit - ev.usedBefore - req.cost), resetMs: ev.resetMs };
  }

  /**
   * Checks every limit at one instant; charges all costs only if all pass. A counter listed twice
   * sees the earlier item's cost. In a failed batch, passing items report `remaining` uncharged.
   */
  checkAll(reqs: readonly LimitRequest[]): BatchResult {
    const nowMs = this.clock.now();
    // Only duplicates need this, so a joined string key is fine here.
    const pending = reqs.length > 1 ? new Map<string, number>() : undefined;
    const evaluations: Evaluation[] = [];
    let allPassed = true;
    for (const req of reqs) {
      const pendingKey = `${req.durationMs}|${req.scope}|${req.identifier}`;
      const earlier = pending?.get(pendingKey) ?? 0;
      const ev = this.evaluate(req, this.findSlot(req), nowMs, earlier);
      pending?.set(pendingKey, earlier + req.cost);
      evaluations.push(ev);
      allPassed &&= ev.passed;
    }
    const results = reqs.map((req, i) => {
      const ev = evaluations[i]!;
      if (!ev.passed) return denied(req, ev);
      const charged = allPassed ? req.cost : 0;
      return { success: true, limit: req.limit, remaining: floorRemaining(req.limit - ev.usedBefore - charged), resetMs: ev.resetMs };
    });
    if (allPassed) {
      for (const req of reqs) if (req.cost > 0) this.charge(req, nowMs, -1);
    }
    return { success: allPassed, results };
  }

  /** The slots changed since the previous call, for the flush to SQLite; clears their marks. */
  takeDirty(): number[] {
    const slots: number[] = [];
    if (this.dirtyCount === 0) return slots;
    // A byte scan over every slot costs ~1 ms per million and needs no per-entry list in memory.
    const bound = this.table.slotBound;
    for (let slot = 0; slot < bound; slot++) {
      if (this.dirty[slot] !== 1) continue;
      this.dirty[slot] = 0;
      slots.push(slot);
    }
    this.dirtyCount = 0;
    return slots;
  }

  /** Marks slots changed again (a flush that failed); slots freed since are skipped. */
  markDirty(slots: readonly number[]): void {
    for (const slot of slots) if (this.table.identifierOf(slot) !== undefined) this.mark(slot);
  }

  /** The window stored in `slot`, or undefined for a free slot. */
  windowOf(slot: number): WindowRow | undefined {
    const identifier = this.table.identifierOf(slot);
    if (identifier === undefined) return undefined;
    const scope = this.scopes.get(this.table.scopeIdOf(slot));
    const base = slot * STRIDE;
    return {
      scope: scope.key, durationMs: scope.durationMs, identifier,
      windowStartMs: this.state[base]!, count: this.state[base + 1]!, previousCount: this.state[base + 2]!,
    };
  }

  /** Loads a stored window at start-up, replacing any state for the same counter; marks nothing dirty. */
  restore(row: WindowRow): void {
    const req = { scope: row.scope, identifier: row.identifier, durationMs: row.durationMs };
    const found = this.findSlot(req);
    this.write(found === -1 ? this.createSlot(req) : found, row.windowStartMs, row.count, row.previousCount);
  }

  /**
   * Removes entries whose stored window ended at least one duration before `nowMs`: at that point
   * neither count is weighed any more. Returns how many were removed.
   */
  prune(nowMs: number): number {
    let removed = 0;
    const bound = this.table.slotBound;
    for (let slot = 0; slot < bound; slot++) {
      if (this.table.identifierOf(slot) === undefined) continue;
      const scope = this.scopes.get(this.table.scopeIdOf(slot));
      if (this.state[slot * STRIDE]! + 2 * scope.durationMs > nowMs) continue;
      this.freeSlot(slot, scope);
      removed++;
    }
    return removed;
  }

  private findSlot(req: Pick<LimitRequest, "scope" | "identifier" | "durationMs">): number {
    const scope = this.scopes.find(req.scope, req.durationMs);
    return scope === undefined ? -1 : this.table.find(scope.id, req.identifier);
  }

  private evaluate(req: LimitRequest, slot: number, nowMs: number, earlierCost: number): Evaluation {
    const w = this.windowsAt(slot, nowMs, req.durationMs);
    const remainingMs = req.durationMs - Math.max(0, nowMs - w.startMs);
    const weightedPrevious = Math.floor((w.previous * remainingMs) / req.durationMs);
    const usedBefore = w.current + weightedPrevious + earlierCost;
    return { resetMs: w.startMs + req.durationMs, usedBefore, passed: usedBefore + req.cost <= req.limit };
  }

  private windowsAt(slot: number, nowMs: number, durationMs: number): Windows {
    const startMs = Math.floor(nowMs / durationMs) * durationMs;
    if (slot === -1) return { startMs, current: 0, previous: 0 };
    const base = slot * STRIDE;
    const storedStartMs = this.state[base]!;
    const count = this.state[base + 1]!;
    // A clock that steps back must not hand out capacity already spent: keep the stored window.
    if (storedStartMs >= startMs) return { startMs: storedStartMs, current: count, previous: this.state[base + 2]! };
    if (storedStartMs === startMs - durationMs) return { startMs, current: 0, previous: count };
    return { startMs, current: 0, previous: 0 };
  }

  private charge(req: LimitRequest, nowMs: number, knownSlot: number): void {
    let slot = knownSlot === -1 ? this.findSlot(req) : knownSlot;
    if (slot === -1) slot = this.createSlot(req);
    // Re-read rather than reuse the evaluation: an earlier item of the batch may have charged it.
    const w = this.windowsAt(slot, nowMs, req.durationMs);
    this.write(slot, w.startMs, w.current + req.cost, w.previous);
    this.mark(slot);
  }

  private mark(slot: number): void {
    if (this.dirty[slot] === 1) return;
    this.dirty[slot] = 1;
    this.dirtyCount++;
  }

  private write(slot: number, windowStartMs: number, count: number, previousCount: number): void {
    const base = slot * STRIDE;
    this.state[base] = windowStartMs;
    this.state[base + 1] = count;
    this.state[base + 2] = previousCount;
  }

  private createSlot(req: Pick<LimitRequest, "scope" | "identifier" | "durationMs">): number {
    const scope = this.scopes.findOrCreate(req.scope, req.durationMs);
    const slot = this.table.insert(scope.id, req.identifier);
    scope.live++;
    if (this.table.capacity > this.dirty.length) this.fitColumns();
    return slot;
  }

  private freeSlot(slot: number, scope: Scope): void {
    // Pruned state is dead; whatever SQLite still holds for it has expired too and is never restored.
    if (this.dirty[slot] === 1) this.dirtyCount--;
    this.dirty[slot] = 0;
    this.write(slot, 0, 0, 0);
    this.table.remove(slot);
    if (--scope.live === 0) this.scopes.release(scope);
  }

  /** Grows the window columns to the table's capacity; slots never move. */
  private fitColumns(): void {
    const capacity = this.table.capacity;
    const state = new Float64Array(capacity * STRIDE);
    state.set(this.state);
    this.state = state;
    const dirty = new Uint8Array(capacity);
    dirty.set(this.dirty);
    this.dirty = dirty;
  }
}

function denied(req: LimitRequest, ev: Evaluation): LimitResult {
  return { success: false, limit: req.limit, remaining: 0, resetMs: ev.resetMs };
}

function floorRemaining(value: number): number {
  return Math.max(0, Math.floor(value));
}
