/**
 * In-memory sliding-window rate limiter (upstream §6.2): two epoch-aligned fixed windows, the
 * previous one weighted by the part of it still inside the sliding window.
 *
 * Invariants:
 * - A denied check consumes nothing; a batch (`checkAll`) commits every cost or none.
 * - Counts are integers: the weighted previous count is floored before it is added, as upstream
 *   does, so `remaining` is always an integer.
 * - State is per (scope, durationMs, identifier); another duration is another window.
 * - Every check moves the counter it finds to the front of its workspace's order; the windows are
 *   held within per-workspace and total memory caps (window-slots.ts says how room is made).
 *
 * Memory: with a million live counters the per-entry cost dominates, so an entry is a slot in
 * typed-array columns (no object per entry), kept by WindowSlots.
 */
import type { Clock } from "../../lib/clock.ts";
import { STRIDE, WindowSlots, type WindowRow, type WindowStats } from "./window-slots.ts";
import { NO_SLOT, type WindowCaps } from "./workspace-windows.ts";

export type { WindowRow, WindowStats } from "./window-slots.ts";

export interface LimitRequest {
  /** Whose memory the counter uses: the caps are per workspace, and a workspace gives up only its own windows. */
  workspace: string;
  /**
   * What many counters share (a namespace, a workspace's key limits…), composed by the caller and
   * opaque here, except that it belongs to one workspace: scopes of two workspaces never share a key.
   * Pass the same string object for every request of a scope when possible: its hash is then
   * computed once.
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
  private readonly slots: WindowSlots;

  /** Without `caps` the windows are unbounded; boot.ts passes the configured ones. */
  constructor(deps: { clock: Clock; caps?: WindowCaps }) {
    this.clock = deps.clock;
    this.slots = new WindowSlots(deps.caps);
  }

  /** Live entries (counters with state in memory). */
  get size(): number {
    return this.slots.size;
  }

  /** Every live slot is below this (for a walk over all windows). */
  get slotBound(): number {
    return this.slots.slotBound;
  }

  /** Live windows, their charged bytes, and how often the caps gave up or refused a window. */
  stats(): WindowStats {
    return this.slots.stats();
  }

  /** Checks one limit and, if it passes, charges its cost. */
  check(req: LimitRequest): LimitResult {
    const nowMs = this.clock.now();
    const slot = this.slots.find(req);
    const ev = this.evaluate(req, slot, nowMs, 0);
    if (slot !== NO_SLOT) this.slots.touch(slot);
    if (!ev.passed) return denied(req, ev);
    if (req.cost > 0) this.charge(req, nowMs, slot, undefined);
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
    /** Slots this batch uses: making room for its new windows must not give them up. */
    const used: number[] = [];
    let allPassed = true;
    for (const req of reqs) {
      const pendingKey = `${req.durationMs}|${req.scope}|${req.identifier}`;
      const earlier = pending?.get(pendingKey) ?? 0;
      const slot = this.slots.find(req);
      const ev = this.evaluate(req, slot, nowMs, earlier);
      if (slot !== NO_SLOT) {
        this.slots.touch(slot);
        used.push(slot);
      }
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
      for (const req of reqs) if (req.cost > 0) this.charge(req, nowMs, NO_SLOT, used);
    }
    return { success: allPassed, results };
  }

  /** The slots changed or used since the previous call, for the flush to SQLite; clears their marks. */
  takeDirty(): number[] {
    return this.slots.takeDirty();
  }

  /** Marks slots changed again (a flush that failed); slots freed since are skipped. */
  markDirty(slots: readonly number[]): void {
    this.slots.markDirty(slots);
  }

  /** The window stored in `slot`, or undefined for a free slot. */
  windowOf(slot: number): WindowRow | undefined {
    return this.slots.windowOf(slot);
  }

  /**
   * Begins a walk over every window, each workspace's least recently used first (the log's snapshot
   * order); windows may change between its steps, and one used again after the walk passed it
   * comes again.
   */
  beginWalk(): void {
    this.slots.beginWalk();
  }

  /** Up to `max` more slots of the walk; fewer (or none) once it is over. */
  walk(max: number): number[] {
    return this.slots.walk(max);
  }

  /**
   * Loads a stored window at start-up, rows newest first: a counter already loaded keeps its state,
   * a window over the caps is left out; marks nothing dirty. Returns whether it was loaded.
   */
  restore(row: WindowRow): boolean {
    return this.slots.restore(row);
  }

  /**
   * Removes entries whose stored window ended at least one duration before `nowMs`: at that point
   * neither count is weighed any more. Returns how many were removed.
   */
  prune(nowMs: number): number {
    return this.slots.prune(nowMs);
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
    if (slot === NO_SLOT) return { startMs, current: 0, previous: 0 };
    const { state } = this.slots;
    const base = slot * STRIDE;
    const storedStartMs = state[base]!;
    const count = state[base + 1]!;
    // A clock that steps back must not hand out capacity already spent: keep the stored window.
    if (storedStartMs >= startMs) return { startMs: storedStartMs, current: count, previous: state[base + 2]! };
    if (storedStartMs === startMs - durationMs) return { startMs, current: 0, previous: count };
    return { startMs, current: 0, previous: 0 };
  }

  /**
   * Adds the cost to the counter's current window, creating the counter if needed. When the caps
   * leave no room for a new counter, nothing is kept: the check was answered from an empty window.
   */
  private charge(req: LimitRequest, nowMs: number, knownSlot: number, used: number[] | undefined): void {
    let slot = knownSlot === NO_SLOT ? this.slots.find(req) : knownSlot;
    if (slot === NO_SLOT) {
      slot = this.slots.create(req, nowMs, used);
      if (slot === NO_SLOT) return;
      used?.push(slot);
    }
    // Re-read rather than reuse the evaluation: an earlier item of the batch may have charged it.
    const w = this.windowsAt(slot, nowMs, req.durationMs);
    const { state } = this.slots;
    const base = slot * STRIDE;
    state[base] = w.startMs;
    state[base + 1] = w.current + req.cost;
    state[base + 2] = w.previous;
    this.slots.touch(slot);
  }
}

function denied(req: LimitRequest, ev: Evaluation): LimitResult {
  return { success: false, limit: req.limit, remaining: 0, resetMs: ev.resetMs };
}

function floorRemaining(value: number): number {
  return Math.max(0, Math.floor(value));
}
