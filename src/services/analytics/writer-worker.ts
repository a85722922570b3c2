/**
 * The writer thread of verification events (see WorkerEventWriter): its own connection to
 * analytics.db, batches written in short transactions by key (each sized to hold the write lock
 * for about HOLD_MS, see ChunkSizer), with a pause between them so that the main thread's
 * retention prune, the other writer of analytics.db, gets the lock promptly. Staged batches wait
 * for the next committing one and are written with it, so that a key's events of the whole flush interval
 * update its minute rows once. After each commit, the minute rows of minutes past are folded into
 * the hour, day and month rollups (fold.ts), in slices paced the same way.
 */
import { runInBackground } from "../../lib/thread-priority.ts";
import { leaveCheckpointsToCheckpointer, openStorage, type Storage } from "../../storage/db.ts";
import { ChunkSizer } from "./chunk-sizer.ts";
import { foldableBefore, RollupFolder } from "./fold.ts";
import { MAX_CHUNK_EVENTS } from "./raw-events.ts";
import { EventTables, keyOrder } from "./tables.ts";
import { EventDecoder } from "./event-codec.ts";
import { ColumnStage, inOrder, storedEventAt, storedEvents, type ArrayPair } from "./columns.ts";
import type { StoredEvent } from "./types.ts";
import type { WriterReply, WriterRequest } from "./writers.ts";
import { answerDecisions } from "./ratelimit-decisions.ts";

declare var self: Worker;

/** Between two chunk transactions: longer than SQLite's first busy-handler sleep (1 ms). */
const PAUSE_MS = 2;
/** What one chunk transaction should take at most, about; a chunk holds at least MIN_CHUNK events. */
const HOLD_MS = 4;
const MIN_CHUNK = 50;

const sizer = new ChunkSizer(HOLD_MS, MIN_CHUNK, MAX_CHUNK_EVENTS);
/**
 * Minute rows per fold slice, sized like the chunks: a slice holds the write lock for about HOLD_MS.
 * What a row costs to fold varies widely (few keys / 100,000 keys), so the first slice, sized before
 * any is timed, is kept to 1,000 rows, few enough even at the dearest.
 */
const foldSizer = new ChunkSizer(HOLD_MS, 50, 1_000);
/** The longest the fold runs after a write before the worker takes its next message; it goes on after the next write. */
const FOLD_BUDGET_MS = 100;

/** A batch staged: its events are the next `count` of the stage's; `spare`, its message's buffers, given back with the answer. */
interface Batch {
  id: number;
  count: number;
  spare: ArrayPair;
}

let storage: Storage | undefined;
let tables: EventTables | undefined;
let folder: RollupFolder | undefined;
let staged: Batch[] = [];
const stage = new ColumnStage();
/** Every write message is decoded, in order, also before the writer is opened: the dictionary depends on it. */
const decoder = new EventDecoder();

/** Answers a batch, and gives its message's buffers back to the main thread (the stage holds a copy of its events). */
function answer(b: Batch, message: { type: "written" } | { type: "failed"; error: string; unwritten: string }): void {
  postMessage({ ...message, id: b.id, spare: b.spare } satisfies WriterReply, [b.spare.refs.buffer, b.spare.numbers.buffer]);
}

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const request = event.data;
  if (request.type === "open") {
    // Events are written up to a flush interval late anyway: verifications go first.
    runInBackground();
    storage = openStorage(request.path);
    if (!request.autoCheckpoint) leaveCheckpointsToCheckpointer(storage.sqlite);
    tables = new EventTables(storage);
    folder = new RollupFolder(storage);
    return;
  }
  if (request.type === "close") {
    if (tables && staged.length > 0) writeStaged(tables);
    storage?.close();
    storage = undefined;
    tables = undefined;
    folder = undefined;
    postMessage({ type: "closed" } satisfies WriterReply);
    return;
  }
  if (request.type === "ratelimit-decisions") {
    postMessage(answerDecisions(storage?.sqlite, request) satisfies WriterReply);
    return;
  }
  const events = decoder.decode(request.events);
  const batch = { id: request.id, count: events.count, spare: { refs: request.events.refs, numbers: request.events.numbers } };
  if (!tables) {
    answer(batch, { type: "failed", error: "the writer was not opened", unwritten: JSON.stringify(storedEvents(events)) });
    return;
  }
  // A dictionary that started over: what is staged is written first, with the dictionary it reads.
  if (stage.count > 0 && events.strings !== stage.dictionary) writeStaged(tables);
  stage.append(events);
  staged.push(batch);
  if (!request.commit) return;
  writeStaged(tables);
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

/** Writes the staged batches' events, then empties the stage. */
function writeStaged(into: EventTables): void {
  const batches = staged;
  staged = [];
  try {
    write(into, batches);
  } finally {
    stage.clear();
  }
}

/**
 * Writes the staged events chunk after chunk; on the first failure, each batch is answered with
 * its events of that chunk and every later one (those before are committed).
 */
function write(into: EventTables, batches: Batch[]): void {
  const events = stage.columns();
  // One chunk keeps the order received; several are cut by key, so a key's minute rows are upserted about once.
  const order = events.count <= sizer.size ? inOrder(events.count) : keyOrder(events);
  for (let at = 0; at < events.count;) {
    const chunk = order.subarray(at, Math.min(events.count, at + sizer.size));
    const started = performance.now();
    try {
      into.writeColumns(events, chunk);
    } catch (error) {
      // Batch b holds the stage's events from ends[b-1] to ends[b].
      const ends: number[] = [];
      for (const b of batches) ends.push((ends.at(-1) ?? 0) + b.count);
      const unwritten = batches.map((): StoredEvent[] => []);
      for (let p = at; p < events.count; p++) {
        const i = order[p]!;
        unwritten[ends.findIndex((end) => i < end)]!.push(storedEventAt(events, i));
      }
      batches.forEach((b, index) => {
        const mine = unwritten[index]!;
        if (mine.length === 0) answer(b, { type: "written" });
        else answer(b, { type: "failed", error: (error as Error).message, unwritten: JSON.stringify(mine) });
      });
      return;
    }
    sizer.observe(chunk.length, performance.now() - started);
    at += chunk.length;
    if (at < events.count) Bun.sleepSync(PAUSE_MS);
  }
  for (const b of batches) answer(b, { type: "written" });
}
