/**
 * The limiter's windows grouped by workspace: what each workspace's windows cost in bytes, and their
 * order from most to least recently used, so that over a cap a workspace gives up its own oldest
 * windows and never another workspace's.
 *
 * The order is a doubly linked list per workspace over slot numbers, held in two Int32Array columns
 * beside the limiter's other per-slot columns: moving a window to the front on every check is a few
 * array writes and allocates nothing, and the oldest window is the list's tail.
 *
 * Bytes are what a window may cost at worst, not what it happens to cost, so that the caps bound the
 * process's memory whatever identifiers callers send: a fixed part (the per-slot columns, counted
 * twice because columns grow by doubling, the index, the string's header) plus two bytes per UTF-16
 * code unit of the identifier. A scope (a namespace or a workspace's key limits, per duration) is
 * charged to its workspace the same way while it has windows.
 */

/** No slot: the end of a list, or an empty one. */
export const NO_SLOT = -1;

/** Bytes charged for every window besides its identifier's characters (bench/ratelimit-memory.ts measures them). */
export const WINDOW_FIXED_BYTES = 160;
/** Bytes charged for every scope besides its key's characters: its object and map entries. */
export const SCOPE_FIXED_BYTES = 512;

export function windowBytes(identifier: string): number {
  return WINDOW_FIXED_BYTES + 2 * identifier.length;
}

export function scopeBytes(key: string): number {
  return SCOPE_FIXED_BYTES + 2 * key.length;
}

/** Memory the limiter's windows may use, as counted by windowBytes and scopeBytes. */
export interface WindowCaps {
  totalBytes: number;
  workspaceBytes: number;
}

export const UNCAPPED: WindowCaps = { totalBytes: Number.POSITIVE_INFINITY, workspaceBytes: Number.POSITIVE_INFINITY };

export interface WorkspaceWindows {
  readonly name: string;
  /** Charged bytes of its windows and scopes. */
  bytes: number;
  windows: number;
  /** Most recently used slot, or NO_SLOT. */
  head: number;
  /** Least recently used slot, or NO_SLOT. */
  tail: number;
}

export class WorkspaceWindowLists {
  private readonly byName = new Map<string, WorkspaceWindows>();
  /** Per slot: the next more recently used slot of its workspace, or NO_SLOT. */
  private newer = new Int32Array(0);
  /** Per slot: the next less recently used slot of its workspace, or NO_SLOT. */
  private older = new Int32Array(0);
  private total = 0;
  /** The walk of beginWalk: its workspaces, the one it is in, and the next slot it gives. */
  private walkWorkspaces: WorkspaceWindows[] = [];
  private walkIndex = 0;
  private walkSlot = NO_SLOT;

  /** Charged bytes of every workspace. */
  get totalBytes(): number {
    return this.total;
  }

  get workspaces(): number {
    return this.byName.size;
  }

  find(name: string): WorkspaceWindows | undefined {
    return this.byName.get(name);
  }

  findOrCreate(name: string): WorkspaceWindows {
    let ws = this.byName.get(name);
    if (ws === undefined) {
      ws = { name, bytes: 0, windows: 0, head: NO_SLOT, tail: NO_SLOT };
      this.byName.set(name, ws);
    }
    return ws;
  }

  /** Forgets a workspace that holds nothing any more. */
  releaseIfEmpty(ws: WorkspaceWindows): void {
    if (ws.bytes === 0 && ws.windows === 0 && this.byName.get(ws.name) === ws) this.byName.delete(ws.name);
  }

  charge(ws: WorkspaceWindows, bytes: number): void {
    ws.bytes += bytes;
    this.total += bytes;
  }

  refund(ws: WorkspaceWindows, bytes: number): void {
    ws.bytes -= bytes;
    this.total -= bytes;
  }

  /** Grows the columns to `capacity` slots; slots never move. */
  fit(capacity: number): void {
    if (capacity <= this.newer.length) return;
    const newer = new Int32Array(capacity);
    newer.set(this.newer);
    this.newer = newer;
    const older = new Int32Array(capacity);
    older.set(this.older);
    this.older = older;
  }

  /** Adds a slot as its workspace's most recently used window. */
  addNewest(ws: WorkspaceWindows, slot: number): void {
    this.older[slot] = ws.head;
    this.newer[slot] = NO_SLOT;
    if (ws.head !== NO_SLOT) this.newer[ws.head] = slot;
    else ws.tail = slot;
    ws.head = slot;
    ws.windows++;
  }

  /** Adds a slot as its workspace's least recently used window (a restore reads the newest first). */
  addOldest(ws: WorkspaceWindows, slot: number): void {
    this.newer[slot] = ws.tail;
    this.older[slot] = NO_SLOT;
    if (ws.tail !== NO_SLOT) this.older[ws.tail] = slot;
    else ws.head = slot;
    ws.tail = slot;
    ws.windows++;
  }

  remove(ws: WorkspaceWindows, slot: number): void {
    const newer = this.newer[slot]!;
    if (slot === this.walkSlot) this.walkSlot = newer;
    const older = this.older[slot]!;
    if (newer !== NO_SLOT) this.older[newer] = older;
    else ws.head = older;
    if (older !== NO_SLOT) this.newer[older] = newer;
    else ws.tail = newer;
    ws.windows--;
  }

  /** Makes a slot its workspace's most recently used window. */
  touch(ws: WorkspaceWindows, slot: number): void {
    if (ws.head === slot) return;
    this.remove(ws, slot);
    this.addNewest(ws, slot);
  }

  /** A workspace's slots from the most to the least recently used. */
  newestFirst(ws: WorkspaceWindows): number[] {
    const slots: number[] = [];
    for (let slot = ws.head; slot !== NO_SLOT; slot = this.older[slot]!) slots.push(slot);
    return slots;
  }

  /**
   * Begins a walk over every window, each workspace's least recently used first (the compaction's
   * snapshot order). The walk survives the lists changing between its steps: a window that moves
   * to the front or goes while the walk stands on it moves the walk on to the next newer one, and a
   * window used again after the walk passed it is met again, later.
   */
  beginWalk(): void {
    this.walkWorkspaces = [...this.byName.values()];
    this.walkIndex = 0;
    this.walkSlot = this.walkWorkspaces[0]?.tail ?? NO_SLOT;
  }

  /** Up to `max` more slots of the walk; fewer (or none) once it is over. */
  walk(max: number): number[] {
    const slots: number[] = [];
    while (slots.length < max) {
      if (this.walkSlot === NO_SLOT) {
        if (++this.walkIndex >= this.walkWorkspaces.length) {
          this.walkWorkspaces = [];
          break;
        }
        this.walkSlot = this.walkWorkspaces[this.walkIndex]!.tail;
        continue;
      }
      slots.push(this.walkSlot);
      this.walkSlot = this.newer[this.walkSlot]!;
    }
    return slots;
  }
}
