/**
 * In-memory sliding-window rate limiter (upstream §6.2): two epoch-aligned fixed windows, the
 * previous one weighted by the part of it still inside the sliding window.
 *
 * Invariants:
 * - A denied check consumes nothing; a batch (`checkAll`) commits every cost or none.
 * - Counts are integers: the weighted previous count is floored before it is added, as upstream
 *   does, so `remaining` is always an integer.
 * - State is per (counter, durationMs); the same counter with another duration is another window.
 *
 * Memory: with a million live counters the per-entry cost dominates, so an entry is a slot in
 * one shared Float64Array (no object per entry), and the maps hold only `counter → slot`.
 */
import type { Clock } from "../../lib/clock.ts";

export interface LimitRequest {
  /** Caller-composed identity (workspace, namespace, identifier…); opaque here. */
  counter: string;
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
  counter: string;
  durationMs: number;
  windowStartMs: number;
  count: number;
  previousCount: number;
}

// Slot layout in `state`: [windowStartMs, count, previousCount, durationMs].
const STRIDE = 4;
const INITIAL_CAPACITY = 1024;

/** What a counter looks like at a given instant, before this check's cost. */
interface Evaluation {
  resetMs: number;
  /** Current count + floored weighted previous count + costs of earlier items of the batch. */
  usedBefore: number;
  passed: boolean;
}

export class SlidingWindowLimiter {
  private readonly clock: Clock;
  /** durationMs → counter → slot. Keyed by number first so a check builds no composite string. */
  private readonly slotsByDuration = new Map<number, Map<string, number>>();
  private state = new Float64Array(INITIAL_CAPACITY * STRIDE);
  private dirty = new Uint8Array(INITIAL_CAPACITY);
  /** slot → counter, so a snapshot finds a dirty slot's counter without walking the maps. */
  private counters: (string | undefined)[] = [];
  private dirtyCount = 0;
  private freeSlots: number[] = [];
  private nextSlot = 0;
  private liveCount = 0;

  constructor(deps: { clock: Clock }) {
    this.clock = deps.clock;
  }

  /** Live entries (counters with state in memory). */
  get size(): number {
    return this.liveCount;
  }

  /** Checks one limit and, if it passes, charges its cost. */
  check(req: LimitRequest): LimitResult {
    const nowMs = this.clock.now();
    const slot = this.findSlot(req.counter, req.durationMs);
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
    // Only duplicates need this; keyed like the maps (duration, then counter) via a joined string.
    const pending = reqs.length > 1 ? new Map<string, number>() : undefined;
    const evaluations: Evaluation[] = [];
    let allPassed = true;
    for (const req of reqs) {
      const pendingKey = `${req.durationMs}|${req.counter}`;
      const earlier = pending?.get(pendingKey) ?? 0;
      const ev = this.evaluate(req, this.findSlot(req.counter, req.durationMs), nowMs, earlier);
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
      for (const req of reqs) if (req.cost > 0) this.charge(req, nowMs, undefined);
    }
    return { success: allPassed, results };
  }

  /** Entries changed since the previous call, for the flush to SQLite; clears the marks. */
  snapshotDirty(): WindowRow[] {
    const rows: WindowRow[] = [];
    if (this.dirtyCount === 0) return rows;
    // A byte scan over every slot costs ~1 ms per million and needs no per-entry list in memory.
    for (let slot = 0; slot < this.nextSlot; slot++) {
      if (this.dirty[slot] !== 1) continue;
      this.dirty[slot] = 0;
      const counter = this.counters[slot];
      if (counter !== undefined) rows.push(this.readRow(slot, counter));
    }
    this.dirtyCount = 0;
    return rows;
  }

  /** Loads stored rows at start-up, replacing any state for the same counter; marks nothing dirty. */
  restore(rows: readonly WindowRow[]): void {
    for (const row of rows) {
      const slot = this.findSlot(row.counter, row.durationMs) ?? this.createSlot(row.counter, row.durationMs);
      this.write(slot, row.windowStartMs, row.count, row.previousCount);
    }
  }

  /**
   * Removes entries whose stored window ended at least one duration before `nowMs`: at that point
   * neither count is weighed any more. Returns how many were removed.
   */
  prune(nowMs: number): number {
    let removed = 0;
    for (const [durationMs, slots] of this.slotsByDuration) {
      for (const [counter, slot] of slots) {
        if ((this.state[slot * STRIDE] ?? 0) + 2 * durationMs > nowMs) continue;
        slots.delete(counter);
        this.freeSlot(slot);
        removed++;
      }
      if (slots.size === 0) this.slotsByDuration.delete(durationMs);
    }
    return removed;
  }

  private evaluate(req: LimitRequest, slot: number | undefined, nowMs: number, earlierCost: number): Evaluation {
    const w = this.windowAt(slot, nowMs, req.durationMs);
    const remainingMs = req.durationMs - Math.max(0, nowMs - w.startMs);
    const weightedPrevious = Math.floor((w.previous * remainingMs) / req.durationMs);
    const usedBefore = w.current + weightedPrevious + earlierCost;
    return { resetMs: w.startMs + req.durationMs, usedBefore, passed: usedBefore + req.cost <= req.limit };
  }

  /** The counter's windows as of `nowMs`, derived from the stored state without changing it. */
  private windowAt(slot: number | undefined, nowMs: number, durationMs: number) {
    const startMs = Math.floor(nowMs / durationMs) * durationMs;
    if (slot === undefined) return { startMs, current: 0, previous: 0 };
    const base = slot * STRIDE;
    const storedStartMs = this.state[base] ?? 0;
    const count = this.state[base + 1] ?? 0;
    // A clock that steps back must not hand out capacity already spent: keep the stored window.
    if (storedStartMs >= startMs) return { startMs: storedStartMs, current: count, previous: this.state[base + 2] ?? 0 };
    if (storedStartMs === startMs - durationMs) return { startMs, current: 0, previous: count };
    return { startMs, current: 0, previous: 0 };
  }

  private charge(req: LimitRequest, nowMs: number, knownSlot: number | undefined): void {
    const slot = knownSlot ?? this.findSlot(req.counter, req.durationMs) ?? this.createSlot(req.counter, req.durationMs);
    // Re-read rather than reuse the evaluation: an earlier item of the batch may have charged it.
    const w = this.windowAt(slot, nowMs, req.durationMs);
    this.write(slot, w.startMs, w.current + req.cost, w.previous);
    if (this.dirty[slot] !== 1) {
      this.dirty[slot] = 1;
      this.dirtyCount++;
    }
  }

  private write(slot: number, windowStartMs: number, count: number, previousCount: number): void {
    const base = slot * STRIDE;
    this.state[base] = windowStartMs;
    this.state[base + 1] = count;
    this.state[base + 2] = previousCount;
  }

  private readRow(slot: number, counter: string): WindowRow {
    const base = slot * STRIDE;
    return {
      counter,
      durationMs: this.state[base + 3] ?? 0,
      windowStartMs: this.state[base] ?? 0,
      count: this.state[base + 1] ?? 0,
      previousCount: this.state[base + 2] ?? 0,
    };
  }

  private findSlot(counter: string, durationMs: number): number | undefined {
    return this.slotsByDuration.get(durationMs)?.get(counter);
  }

  private createSlot(counter: string, durationMs: number): number {
    const slot = this.freeSlots.pop() ?? this.nextSlot++;
    if (slot >= this.dirty.length) this.grow();
    let slots = this.slotsByDuration.get(durationMs);
    if (slots === undefined) {
      slots = new Map();
      this.slotsByDuration.set(durationMs, slots);
    }
    slots.set(counter, slot);
    this.counters[slot] = counter;
    this.state[slot * STRIDE + 3] = durationMs;
    this.liveCount++;
    return slot;
  }

  private freeSlot(slot: number): void {
    this.counters[slot] = undefined;
    // Pruned state is dead; a stale row left in SQLite is equally out of reach and is pruned there.
    if (this.dirty[slot] === 1) this.dirtyCount--;
    this.dirty[slot] = 0;
    this.write(slot, 0, 0, 0);
    this.freeSlots.push(slot);
    this.liveCount--;
  }

  /** Doubles capacity; slots never move, so the maps stay valid. */
  private grow(): void {
    const state = new Float64Array(this.state.length * 2);
    state.set(this.state);
    this.state = state;
    const dirty = new Uint8Array(this.dirty.length * 2);
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
