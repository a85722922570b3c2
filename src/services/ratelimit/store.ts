/**
 * Persistence of the limiter's windows in the append-only `ratelimit_log`, so counts survive a
 * restart.
 *
 * - A flush appends the windows changed or used since the last flush, in chunks: every second one
 *   chunk per step (`beginFlush`, `flushStep`), on stop all at once (`flush`). A flush that fails
 *   marks its windows changed again, so the next flush writes them, with whatever they hold by then:
 *   a busy database delays the save but loses nothing, and an older value is never written after a
 *   newer one. A queued slot freed before its chunk is written is skipped; one freed and reused
 *   writes its new counter's window, which is that counter's true state.
 * - `restore` reads the log newest first at start, before the service listens: a counter's latest
 *   window wins and older ones are skipped; expired windows and windows of a length no longer used
 *   are not restored; and the limiter keeps only what fits its caps, so it keeps each workspace's
 *   windows that were used last. Rows of the first storage format (`ratelimit_windows`) are read
 *   last, then written to the log and deleted.
 * - Compaction keeps the log near the size of the live state: once the log holds COMPACT_FACTOR
 *   times more windows than are live, `compactStep` appends a snapshot of the live windows, walking
 *   the limiter's lists one chunk per step (each workspace's least recently used first, so that a
 *   restore reads them in the order they were used; windows used during the walk are flushed after
 *   it anyway), and then deletes, a few chunks at a time, every chunk that existed before the
 *   snapshot began. Each step is short, so the caller can run them between requests. A crash in the
 *   middle leaves a log that still replays correctly: superseded chunks are just read once more.
 *
 * Bound: the live windows are capped (window-slots.ts), and evicted or expired windows are left out
 * of every snapshot, so the log holds at most (COMPACT_FACTOR + 2 + f) × max(live windows, compaction
 * floor) windows: the trigger's COMPACT_FACTOR times, the flush that crossed it, the snapshot, and
 * the f flushes that overlap one compaction (whose steps run back to back), each at most the live
 * windows.
 */
import type { Storage } from "../../storage/db.ts";
import type { SlidingWindowLimiter, WindowRow } from "./sliding-window.ts";
import { WindowLogTable } from "./log-table.ts";
import { CHUNK_WINDOWS, encodeChunk, expiresMs, type EncodedChunk } from "./window-log.ts";
import { isUsableDurationMs } from "./durations.ts";

/** Compact when the log holds this many times the live windows… */
export const COMPACT_FACTOR = 4;
/** …counting at least this many live ones, so a small state is not rewritten every few flushes. */
const COMPACT_FLOOR = 25_000;
/** Chunks deleted per compaction step (each may free a few dozen overflow pages). */
const DELETE_CHUNKS_PER_STEP = 16;

type Compaction =
  /** `retry`: the slots of a snapshot step whose write failed, written first by the next step. */
  | { phase: "snapshot"; supersedesUpTo: number; retry: number[] | undefined }
  | { phase: "delete"; supersedesUpTo: number };

export class RatelimitStore {
  private readonly log: WindowLogTable;
  /** Windows held by the log's chunks (live or superseded), the measure of its size. */
  private loggedWindows = 0;
  private compaction: Compaction | undefined;
  /** Slots queued by `beginFlush`; those from `queuedFrom` on are not written yet. */
  private queued: number[] = [];
  private queuedFrom = 0;

  private readonly compactFloor: number;

  /** `compactFloorWindows` (default 25,000): the smallest live count the trigger assumes. */
  constructor(private readonly deps: { storage: Storage; limiter: SlidingWindowLimiter; compactFloorWindows?: number }) {
    this.log = new WindowLogTable(deps.storage);
    this.compactFloor = deps.compactFloorWindows ?? COMPACT_FLOOR;
  }

  /**
   * Saves every window changed since the last flush, and any still queued by `beginFlush`, in one
   * transaction (the flush on stop); returns windows written.
   */
  flush(nowMs: number): number {
    const slots = this.queued.slice(this.queuedFrom).concat(this.deps.limiter.takeDirty());
    this.queued = [];
    this.queuedFrom = 0;
    return slots.length === 0 ? 0 : this.write(slots, nowMs);
  }

  /**
   * The periodic flush, in steps: queues the windows changed since the last flush, for
   * `flushStep` to write one chunk per call, so no single step holds the event loop for long.
   */
  beginFlush(): void {
    const slots = this.deps.limiter.takeDirty();
    if (slots.length > 0) this.queued = this.queued.concat(slots);
  }

  /** Whether `beginFlush` queued windows that are not written yet. */
  get flushQueued(): boolean {
    return this.queuedFrom < this.queued.length;
  }

  /**
   * Writes one chunk of the queued windows, as they are now, in its own transaction; returns
   * whether more remain. On failure every queued window is marked changed again (the next flush
   * writes it) and the error is thrown.
   */
  flushStep(nowMs: number): boolean {
    const end = Math.min(this.queued.length, this.queuedFrom + CHUNK_WINDOWS);
    try {
      this.write(this.queued.slice(this.queuedFrom, end), nowMs);
    } catch (error) {
      this.deps.limiter.markDirty(this.queued.slice(this.queuedFrom));
      this.queued = [];
      this.queuedFrom = 0;
      throw error;
    }
    this.queuedFrom = end;
    if (end < this.queued.length) return true;
    this.queued = [];
    this.queuedFrom = 0;
    return false;
  }

  /**
   * Loads the windows still weighed at `nowMs` into the limiter, newest first, as many as its caps
   * hold; returns how many are live then.
   */
  restore(nowMs: number): number {
    const { limiter } = this.deps;
    const usable = (row: WindowRow) => expiresMs(row) > nowMs && isUsableDurationMs(row.durationMs);
    for (const row of this.log.replayNewestFirst(nowMs)) if (usable(row)) limiter.restore(row);
    for (const row of this.log.legacyRows(nowMs)) if (usable(row)) limiter.restore(row);
    this.loggedWindows = this.log.totalWindows();
    if (this.log.hasLegacyRows()) {
      // Before listening, so at once: the log takes over the old rows, then they go.
      this.compactNow(nowMs);
      this.log.deleteLegacyRows();
    }
    return limiter.size;
  }

  /** Drops windows no longer weighed at `nowMs` from memory, and log chunks that hold only such windows. */
  prune(nowMs: number): { memory: number; stored: number } {
    const memory = this.deps.limiter.prune(nowMs);
    const deleted = this.log.deleteExpired(nowMs, DELETE_CHUNKS_PER_STEP * 4);
    this.loggedWindows -= deleted.windows;
    return { memory, stored: deleted.windows };
  }

  /** Whether a compaction is under way or the log has grown enough to start one. */
  compactionDue(): boolean {
    if (this.compaction !== undefined) return true;
    return this.loggedWindows > COMPACT_FACTOR * Math.max(this.deps.limiter.size, this.compactFloor);
  }

  /**
   * One bounded step of compaction (starting one when none is under way): one snapshot chunk, or
   * one batch of deletions. Returns whether more steps remain. A step that throws changes nothing
   * and is retried by the next call.
   */
  compactStep(nowMs: number): boolean {
    let c = this.compaction;
    if (c === undefined) {
      c = { phase: "snapshot", supersedesUpTo: this.log.lastSeq(), retry: undefined };
      this.deps.limiter.beginWalk();
      this.compaction = c;
    }
    if (c.phase === "snapshot") {
      const slots = c.retry ?? this.deps.limiter.walk(CHUNK_WINDOWS);
      c.retry = slots;
      const rows = this.liveWindows(slots, nowMs);
      if (rows.length > 0) this.log.append([encodeChunk(rows)]);
      c.retry = undefined;
      this.loggedWindows += rows.length;
      if (slots.length < CHUNK_WINDOWS) this.compaction = { phase: "delete", supersedesUpTo: c.supersedesUpTo };
      return true;
    }
    const deleted = this.log.deleteUpTo(c.supersedesUpTo, DELETE_CHUNKS_PER_STEP);
    this.loggedWindows -= deleted.windows;
    if (deleted.rows < DELETE_CHUNKS_PER_STEP) this.compaction = undefined;
    return this.compaction !== undefined;
  }

  /** Runs a whole compaction now (start-up, tests). */
  compactNow(nowMs: number): void {
    while (this.compactStep(nowMs));
  }

  /** Appends the windows of `slots` that still weigh; on failure marks them changed again and throws. */
  private write(slots: readonly number[], nowMs: number): number {
    try {
      const chunks = encodeChunks(this.liveWindows(slots, nowMs));
      this.log.append(chunks);
      const written = chunks.reduce((n, c) => n + c.windows, 0);
      this.loggedWindows += written;
      return written;
    } catch (error) {
      this.deps.limiter.markDirty(slots);
      throw error;
    }
  }

  /**
   * The windows of `slots` that still weigh at `nowMs`, in that order (free slots are skipped; a slot
   * freed and reused since gives its new counter's window, which later flushes write again anyway).
   */
  private liveWindows(slots: readonly number[], nowMs: number): WindowRow[] {
    const rows: WindowRow[] = [];
    for (const slot of slots) {
      const row = this.deps.limiter.windowOf(slot);
      if (row !== undefined && expiresMs(row) > nowMs) rows.push(row);
    }
    return rows;
  }
}

function encodeChunks(rows: readonly WindowRow[]): EncodedChunk[] {
  const chunks: EncodedChunk[] = [];
  for (let i = 0; i < rows.length; i += CHUNK_WINDOWS) chunks.push(encodeChunk(rows.slice(i, i + CHUNK_WINDOWS)));
  return chunks;
}
