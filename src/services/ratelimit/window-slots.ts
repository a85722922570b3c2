/**
 * Where the limiter keeps its windows: one slot per counter in typed-array columns (no object per
 * window), found through CounterTable, grouped and ordered by workspace in WorkspaceWindowLists,
 * and held within the memory caps.
 *
 * Room for a new window, in this order: the workspace over its own cap gives up its least recently
 * used windows; with the total cap reached, windows that have expired (of any workspace: they weigh
 * nothing) are dropped first, a bounded number of slots looked at per attempt, and then the
 * workspace's own least recently used ones. A workspace with nothing left to give gets no window:
 * its check is answered from an empty window and nothing is kept (counted as `unkept`). Another
 * workspace's live window is never given up, and neither is a window of the batch being charged.
 */
import { CounterTable, ScopeRegistry, type Scope } from "./counter-table.ts";
import {
  NO_SLOT, UNCAPPED, WorkspaceWindowLists, scopeBytes, windowBytes, type WindowCaps, type WorkspaceWindows,
} from "./workspace-windows.ts";

/** One counter's stored state; `previousCount` belongs to the window before `windowStartMs`. */
export interface WindowRow {
  workspace: string;
  scope: string;
  durationMs: number;
  identifier: string;
  windowStartMs: number;
  count: number;
  previousCount: number;
}

/** A counter as the slots know it: its workspace, scope, window length and identifier. */
export type CounterRef = Pick<WindowRow, "workspace" | "scope" | "durationMs" | "identifier">;

export interface WindowStats {
  windows: number;
  /** Charged bytes of every window and scope (workspace-windows.ts). */
  bytes: number;
  workspaces: number;
  /** Windows given up to make room for a newer window of the same workspace, since start. */
  evicted: number;
  /** New windows not kept because their workspace had nothing left to give, since start. */
  unkept: number;
}

/** Slot layout in `state`: [windowStartMs, count, previousCount]; the duration is the scope's. */
export const STRIDE = 3;
/** Slots a full total cap looks at for expired windows per new window. */
const SWEEP_SLOTS = 256;
const NO_SLOTS: readonly number[] = [];

export class WindowSlots {
  private readonly scopes = new ScopeRegistry();
  private readonly table = new CounterTable();
  private readonly lists = new WorkspaceWindowLists();
  /** Per slot, STRIDE numbers; read and written by the limiter. */
  state = new Float64Array(0);
  /** 1 for a slot changed or used since the last `takeDirty`. */
  private dirty = new Uint8Array(0);
  private dirtyCount = 0;
  private sweepCursor = 0;
  private evicted = 0;
  private unkept = 0;

  constructor(private readonly caps: WindowCaps = UNCAPPED) {
    this.fitColumns();
  }

  get size(): number {
    return this.table.size;
  }

  get slotBound(): number {
    return this.table.slotBound;
  }

  stats(): WindowStats {
    return { windows: this.table.size, bytes: this.lists.totalBytes, workspaces: this.lists.workspaces, evicted: this.evicted, unkept: this.unkept };
  }

  /** The slot of a counter, or NO_SLOT. */
  find(counter: Pick<CounterRef, "scope" | "durationMs" | "identifier">): number {
    const scope = this.scopes.find(counter.scope, counter.durationMs);
    return scope === undefined ? NO_SLOT : this.table.find(scope.id, counter.identifier);
  }

  /** Marks a slot used now: first in its workspace's order, and saved with the next flush. */
  touch(slot: number): void {
    this.lists.touch(this.scopeOf(slot).workspace, slot);
    this.mark(slot);
  }

  /**
   * A new, empty, used slot for a counter `find` does not know, made room for under the caps
   * without giving up `protectedSlots`; NO_SLOT when its workspace has nothing left to give.
   */
  create(counter: CounterRef, nowMs: number, protectedSlots: readonly number[] | undefined): number {
    const ws = this.lists.findOrCreate(counter.workspace);
    let swept = false;
    for (;;) {
      const needed = windowBytes(counter.identifier) + (this.scopes.find(counter.scope, counter.durationMs) ? 0 : scopeBytes(counter.scope));
      const overWorkspace = ws.bytes + needed > this.caps.workspaceBytes;
      if (!overWorkspace && this.lists.totalBytes + needed <= this.caps.totalBytes) break;
      if (!overWorkspace && !swept) {
        swept = true;
        if (this.sweepExpired(nowMs) > 0) continue;
      }
      if (!this.evictOldest(ws, protectedSlots ?? NO_SLOTS)) {
        this.unkept++;
        this.lists.releaseIfEmpty(ws);
        return NO_SLOT;
      }
    }
    // Giving up its last window may have made the workspace forget itself: look it up again.
    const home = this.lists.findOrCreate(counter.workspace);
    const slot = this.insert(counter, home);
    this.lists.addNewest(home, slot);
    this.mark(slot);
    return slot;
  }

  /**
   * Loads a stored window that is older than every window loaded so far (the log is read newest
   * first): a counter already loaded keeps its newer state, and a window that does not fit the caps
   * is left out, so a restore never brings back more than the caps. Returns whether it was loaded.
   */
  restore(row: WindowRow): boolean {
    if (this.find(row) !== NO_SLOT) return false;
    const ws = this.lists.findOrCreate(row.workspace);
    const needed = windowBytes(row.identifier) + (this.scopes.find(row.scope, row.durationMs) ? 0 : scopeBytes(row.scope));
    if (ws.bytes + needed > this.caps.workspaceBytes || this.lists.totalBytes + needed > this.caps.totalBytes) {
      this.lists.releaseIfEmpty(ws);
      return false;
    }
    const slot = this.insert(row, ws);
    this.lists.addOldest(ws, slot);
    const base = slot * STRIDE;
    this.state[base] = row.windowStartMs;
    this.state[base + 1] = row.count;
    this.state[base + 2] = row.previousCount;
    return true;
  }

  /** Removes windows no longer weighed at `nowMs` (stored window ended a duration ago); returns how many. */
  prune(nowMs: number): number {
    let removed = 0;
    const bound = this.table.slotBound;
    for (let slot = 0; slot < bound; slot++) {
      if (this.table.identifierOf(slot) !== undefined && this.expired(slot, nowMs)) {
        this.free(slot);
        removed++;
      }
    }
    return removed;
  }

  /** The slots changed or used since the previous call, for the flush to SQLite; clears their marks. */
  takeDirty(): number[] {
    const slots: number[] = [];
    if (this.dirtyCount === 0) return slots;
    // A byte scan over every slot is cheap and needs no per-entry list in memory.
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
    const scope = this.scopeOf(slot);
    const base = slot * STRIDE;
    return {
      workspace: scope.workspace.name, scope: scope.key, durationMs: scope.durationMs, identifier,
      windowStartMs: this.state[base]!, count: this.state[base + 1]!, previousCount: this.state[base + 2]!,
    };
  }

  /** Begins a walk over every window, each workspace's least recently used first (workspace-windows.ts). */
  beginWalk(): void {
    this.lists.beginWalk();
  }

  /** Up to `max` more slots of the walk; fewer (or none) once it is over. */
  walk(max: number): number[] {
    return this.lists.walk(max);
  }

  private scopeOf(slot: number): Scope {
    return this.scopes.get(this.table.scopeIdOf(slot));
  }

  private expired(slot: number, nowMs: number): boolean {
    return this.state[slot * STRIDE]! + 2 * this.scopeOf(slot).durationMs <= nowMs;
  }

  private mark(slot: number): void {
    if (this.dirty[slot] === 1) return;
    this.dirty[slot] = 1;
    this.dirtyCount++;
  }

  /** A slot for the counter with its scope (created and charged if new) and its bytes charged; not in any list yet. */
  private insert(counter: CounterRef, ws: WorkspaceWindows): number {
    let scope = this.scopes.find(counter.scope, counter.durationMs);
    if (scope === undefined) {
      scope = this.scopes.create(counter.scope, counter.durationMs, ws);
      this.lists.charge(ws, scopeBytes(scope.key));
    }
    const slot = this.table.insert(scope.id, counter.identifier);
    scope.live++;
    this.lists.charge(ws, windowBytes(counter.identifier));
    if (this.table.capacity > this.dirty.length) this.fitColumns();
    return slot;
  }

  private free(slot: number): void {
    const scope = this.scopeOf(slot);
    const ws = scope.workspace;
    // Whatever SQLite still holds for a freed window is superseded or dead: the next compaction drops it.
    if (this.dirty[slot] === 1) this.dirtyCount--;
    this.dirty[slot] = 0;
    const base = slot * STRIDE;
    this.state[base] = 0;
    this.state[base + 1] = 0;
    this.state[base + 2] = 0;
    this.lists.refund(ws, windowBytes(this.table.identifierOf(slot)!));
    this.lists.remove(ws, slot);
    this.table.remove(slot);
    if (--scope.live === 0) {
      this.scopes.release(scope);
      this.lists.refund(ws, scopeBytes(scope.key));
    }
    this.lists.releaseIfEmpty(ws);
  }

  /** Gives up the workspace's least recently used window unless it is protected; whether one went. */
  private evictOldest(ws: WorkspaceWindows, protectedSlots: readonly number[]): boolean {
    const oldest = ws.tail;
    // Protected slots were used by this call, so they are the newest: when the oldest is one, all are.
    if (oldest === NO_SLOT || protectedSlots.includes(oldest)) return false;
    this.free(oldest);
    this.evicted++;
    return true;
  }

  /** Frees the expired windows among the next SWEEP_SLOTS slots (wrapping around); returns how many. */
  private sweepExpired(nowMs: number): number {
    const bound = this.table.slotBound;
    let freed = 0;
    for (let i = 0; i < SWEEP_SLOTS && i < bound; i++) {
      if (this.sweepCursor >= bound) this.sweepCursor = 0;
      const slot = this.sweepCursor++;
      if (this.table.identifierOf(slot) !== undefined && this.expired(slot, nowMs)) {
        this.free(slot);
        freed++;
      }
    }
    return freed;
  }

  /** Grows the per-slot columns to the table's capacity; slots never move. */
  private fitColumns(): void {
    const capacity = this.table.capacity;
    const state = new Float64Array(capacity * STRIDE);
    state.set(this.state);
    this.state = state;
    const dirty = new Uint8Array(capacity);
    dirty.set(this.dirty);
    this.dirty = dirty;
    this.lists.fit(capacity);
  }
}
