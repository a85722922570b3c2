/**
 * The writer thread of verification events (see WorkerEventWriter): its own connection to
 * analytics.db, at background priority. Staged batches wait for the next committing one and are
 * written with it, in transactions of MAX_CHUNK_EVENTS events at most with a pause between them, so
 * that the main thread's retention prune, the other writer of analytics.db, gets the lock promptly.
 * After each commit, the minute rows of minutes past are folded into the hour, day and month
 * rollups (fold.ts), in slices paced the same way.
 */
import { runInBackground } from "../../lib/thread-priority.ts";
import { leaveCheckpointsToCheckpointer, openStorage, type Storage } from "../../storage/db.ts";
import { foldableBefore, RollupFolder } from "./fold.ts";
import { MAX_CHUNK_EVENTS } from "./raw-events.ts";
import { EventTables } from "./tables.ts";
import type { StoredEvent } from "./types.ts";
import { packedCount, unpackEvents } from "./packed-events.ts";
import type { WriterReply, WriterRequest } from "./writers.ts";
import { answerDecisions } from "./ratelimit-decisions.ts";

declare var self: Worker;

/** Between two transactions: longer than SQLite's first busy-handler sleep (1 ms). */
const PAUSE_MS = 2;
/** Minute rows per fold slice: few enough that a slice holds the write lock briefly even when every row is a new coarser row. */
const FOLD_SLICE_ROWS = 500;
/** The longest the fold runs after a write before the worker takes its next message; it goes on after the next write. */
const FOLD_BUDGET_MS = 100;

interface Batch {
  id: number;
  events: readonly StoredEvent[];
}

let storage: Storage | undefined;
let tables: EventTables | undefined;
let folder: RollupFolder | undefined;
let staged: Batch[] = [];

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
    storage = tables = folder = undefined;
    postMessage({ type: "closed" } satisfies WriterReply);
    return;
  }
  if (request.type === "ratelimit-decisions") {
    postMessage(answerDecisions(storage?.sqlite, request) satisfies WriterReply);
    return;
  }
  if (!tables) {
    postMessage({ type: "failed", id: request.id, error: "the writer was not opened", unwritten: Array.from({ length: packedCount(request.events) }, (_, i) => i) } satisfies WriterReply);
    return;
  }
  staged.push({ id: request.id, events: unpackEvents(request.events) });
  if (!request.commit) return;
  writeStaged(tables);
  if (folder) fold(folder, tables.latestEventMs);
};

/**
 * Writes the staged batches' events chunk after chunk; on the first failure, each batch is answered
 * with its events of that chunk and every later one (those before are committed). More events than
 * a chunk are ordered by key first, so that a key's minute rows are upserted about once per commit,
 * not once per chunk.
 */
function writeStaged(into: EventTables): void {
  const batches = staged;
  staged = [];
  const events: StoredEvent[] = [];
  for (const b of batches) for (const e of b.events) events.push(e);
  const order = events.length > MAX_CHUNK_EVENTS ? byKey(events) : Array.from(events.keys());
  for (let at = 0; at < order.length; at += MAX_CHUNK_EVENTS) {
    if (at > 0) Bun.sleepSync(PAUSE_MS);
    try {
      into.write(order.slice(at, at + MAX_CHUNK_EVENTS).map((i) => events[i]!));
    } catch (error) {
      answerFailed(batches, order.slice(at), (error as Error).message);
      return;
    }
  }
  for (const b of batches) postMessage({ type: "written", id: b.id } satisfies WriterReply);
}

/** The indexes of `events`, a key's together in the order its first event came, each key's in their own order. */
function byKey(events: readonly StoredEvent[]): number[] {
  const ofKey = new Map<string, number[]>();
  events.forEach((e, i) => {
    const indexes = ofKey.get(e.keyId);
    if (indexes) indexes.push(i);
    else ofKey.set(e.keyId, [i]);
  });
  return [...ofKey.values()].flat();
}

/** Answers each batch: written, or failed with the indexes of its own events among `unwritten` (indexes into all the batches' events). */
function answerFailed(batches: readonly Batch[], unwritten: readonly number[], error: string): void {
  const mine = batches.map((): number[] => []);
  for (const i of unwritten) {
    let n = 0;
    let local = i;
    while (local >= batches[n]!.events.length) local -= batches[n++]!.events.length;
    mine[n]!.push(local);
  }
  batches.forEach((b, n) => {
    const indexes = mine[n]!.sort((x, y) => x - y);
    if (indexes.length === 0) postMessage({ type: "written", id: b.id } satisfies WriterReply);
    else postMessage({ type: "failed", id: b.id, error, unwritten: indexes } satisfies WriterReply);
  });
}

/**
 * Folds the minute rows of minutes that ended FOLD_GRACE_MS before the newest event written, slice
 * after slice with a pause between, for FOLD_BUDGET_MS at most. A failed slice rolled back and its
 * rows stay unfolded (the queries read them through the views); the next write tries again.
 */
function fold(into: RollupFolder, latestEventMs: number): void {
  const before = foldableBefore(latestEventMs);
  const started = performance.now();
  try {
    while (into.foldSlice(before, FOLD_SLICE_ROWS) === FOLD_SLICE_ROWS && performance.now() - started < FOLD_BUDGET_MS) Bun.sleepSync(PAUSE_MS);
  } catch {
    // Left for the next write, as above.
  }
}
