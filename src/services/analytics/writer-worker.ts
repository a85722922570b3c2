/**
 * The writer thread of verification events (see WorkerEventWriter): its own connection to
 * analytics.db, batches written in short transactions by key (each sized to hold the write lock
 * for about HOLD_MS, see ChunkSizer), with a pause between them so that the main thread's
 * retention prune, the other writer of analytics.db, gets the lock promptly. Staged batches wait
 * for the next committing one and are written with it, so that a key's events of the whole flush interval
 * update its minute rows once. After each commit, the minute rows of minutes past are folded into
 * the hour, day and month rollups (fold.ts), in slices paced the same way.
 */
import { leaveCheckpointsToCheckpointer, openStorage, type Storage } from "../../storage/db.ts";
import { ChunkSizer } from "./chunk-sizer.ts";
import { foldableBefore, RollupFolder } from "./fold.ts";
import { MAX_CHUNK_EVENTS } from "./raw-events.ts";
import { EventTables, keyOrder } from "./tables.ts";
import { EventDecoder } from "./event-codec.ts";
import type { StoredEvent } from "./types.ts";
import type { WriterReply, WriterRequest } from "./writers.ts";

declare var self: Worker;

/** Between two chunk transactions: longer than SQLite's first busy-handler sleep (1 ms). */
const PAUSE_MS = 2;
/** What one chunk transaction should take at most, about; a chunk holds at least MIN_CHUNK events. */
const HOLD_MS = 4;
const MIN_CHUNK = 50;

const sizer = new ChunkSizer(HOLD_MS, MIN_CHUNK, MAX_CHUNK_EVENTS);
/**
 * Minute rows per fold slice, sized like the chunks: a slice holds the write lock for about HOLD_MS.
 * A row costs 4-35 µs to fold (few keys / 100,000 keys), so the first slice, sized before any is
 * measured, is kept to 1,000 rows: at most about 35 ms.
 */
const foldSizer = new ChunkSizer(HOLD_MS, 50, 1_000);
/** The longest the fold runs after a write before the worker takes its next message; it goes on after the next write. */
const FOLD_BUDGET_MS = 100;

interface Batch {
  id: number;
  events: StoredEvent[];
}

let storage: Storage | undefined;
let tables: EventTables | undefined;
let folder: RollupFolder | undefined;
let staged: Batch[] = [];
/** Every write message is decoded, in order, also before the writer is opened: the dictionary depends on it. */
const decoder = new EventDecoder();

const reply = (message: WriterReply) => postMessage(message);

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const request = event.data;
  if (request.type === "open") {
    storage = openStorage(request.path);
    if (!request.autoCheckpoint) leaveCheckpointsToCheckpointer(storage.sqlite);
    tables = new EventTables(storage);
    folder = new RollupFolder(storage);
    return;
  }
  if (request.type === "close") {
    if (tables && staged.length > 0) write(tables, takeStaged());
    storage?.close();
    storage = undefined;
    tables = undefined;
    folder = undefined;
    reply({ type: "closed" });
    return;
  }
  const events = decoder.decode(request.events);
  if (!tables) {
    reply({ type: "failed", id: request.id, error: "the writer was not opened", unwritten: JSON.stringify(events) });
    return;
  }
  staged.push({ id: request.id, events });
  if (!request.commit) return;
  write(tables, takeStaged());
  if (folder) fold(folder, tables.latestEventMs);
};

/**
 * Folds the minute rows of minutes that ended FOLD_GRACE_MS before the newest event written, slice
 * after slice with a pause between, for FOLD_BUDGET_MS at most. A failed slice rolled back and its
 * rows stay unfolded (the queries read them through the views); the next write tries again.
 */
function fold(into: RollupFolder, latestEventMs: number): void {
  const before = foldableBefore(latestEventMs);
  const started = performance.now();
  try {
    for (;;) {
      const size = foldSizer.size;
      const sliceStarted = performance.now();
      const folded = into.foldSlice(before, size);
      foldSizer.observe(folded, performance.now() - sliceStarted);
      if (folded < size || performance.now() - started > FOLD_BUDGET_MS) return;
      Bun.sleepSync(PAUSE_MS);
    }
  } catch {
    // Left for the next write, as above.
  }
}

function takeStaged(): Batch[] {
  const batches = staged;
  staged = [];
  return batches;
}

/**
 * Writes the batches' events chunk after chunk; on the first failure, each batch is answered with
 * its events of that chunk and every later one (those before are committed).
 */
function write(into: EventTables, batches: Batch[]): void {
  const events: StoredEvent[] = [];
  const batchOf: number[] = [];
  for (const b of batches) {
    for (const e of b.events) {
      events.push(e);
      batchOf.push(b.id);
    }
  }
  // One chunk keeps the order received; several are cut by key, so a key's minute rows are upserted about once.
  const order = events.length <= sizer.size ? undefined : keyOrder(events);
  const eventAt = (position: number): number => (order ? order[position]! : position);
  for (let at = 0; at < events.length;) {
    const end = Math.min(events.length, at + sizer.size);
    const chunk: StoredEvent[] = [];
    for (let p = at; p < end; p++) chunk.push(events[eventAt(p)]!);
    const started = performance.now();
    try {
      into.write(chunk);
    } catch (error) {
      const unwritten = new Map<number, StoredEvent[]>();
      for (let p = at; p < events.length; p++) {
        const i = eventAt(p);
        const mine = unwritten.get(batchOf[i]!);
        if (mine) mine.push(events[i]!);
        else unwritten.set(batchOf[i]!, [events[i]!]);
      }
      for (const b of batches) {
        const mine = unwritten.get(b.id);
        if (mine === undefined) reply({ type: "written", id: b.id });
        else reply({ type: "failed", id: b.id, error: (error as Error).message, unwritten: JSON.stringify(mine) });
      }
      return;
    }
    sizer.observe(chunk.length, performance.now() - started);
    at = end;
    if (at < events.length) Bun.sleepSync(PAUSE_MS);
  }
  for (const b of batches) reply({ type: "written", id: b.id });
}
