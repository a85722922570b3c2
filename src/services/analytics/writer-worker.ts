/**
 * The writer thread of verification events (see WorkerEventWriter): its own connection to
 * analytics.db, at background priority. A batch is written in transactions of MAX_CHUNK_EVENTS
 * events at most with a pause between them, so that the main thread's retention prune, the other
 * writer of analytics.db, gets the lock promptly.
 * After each commit, the minute rows of minutes past are folded into the hour, day and month
 * rollups (fold.ts), in slices paced the same way.
 */
import { runInBackground } from "../../lib/thread-priority.ts";
import { leaveCheckpointsToCheckpointer, openStorage, type Storage } from "../../storage/db.ts";
import { foldableBefore, RollupFolder } from "./fold.ts";
import { MAX_CHUNK_EVENTS } from "./raw-events.ts";
import { EventTables } from "./tables.ts";
import type { StoredEvent } from "./types.ts";
import { unpackEvents } from "./packed-events.ts";
import type { WriterReply, WriterRequest } from "./writers.ts";
import { answerDecisions } from "./ratelimit-decisions.ts";

declare var self: Worker;

/** Between two transactions: longer than SQLite's first busy-handler sleep (1 ms). */
const PAUSE_MS = 2;
/** Minute rows per fold slice: few enough that a slice holds the write lock briefly even when every row is a new coarser row. */
const FOLD_SLICE_ROWS = 500;
/** The longest the fold runs after a write before the worker takes its next message; it goes on after the next write. */
const FOLD_BUDGET_MS = 100;

let storage: Storage | undefined;
let tables: EventTables | undefined;
let folder: RollupFolder | undefined;

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
    storage?.close();
    storage = tables = folder = undefined;
    postMessage({ type: "closed" } satisfies WriterReply);
    return;
  }
  if (request.type === "ratelimit-decisions") {
    postMessage(answerDecisions(storage?.sqlite, request) satisfies WriterReply);
    return;
  }
  const events = unpackEvents(request.events);
  const unwritten = tables ? writeChunks(tables, events) : { from: Array.from(events.keys()), error: "the writer was not opened" };
  if (unwritten) postMessage({ type: "failed", id: request.id, error: unwritten.error, unwritten: unwritten.from.sort((x, y) => x - y) } satisfies WriterReply);
  else postMessage({ type: "written", id: request.id } satisfies WriterReply);
  if (tables && folder) fold(folder, tables.latestEventMs);
};

/**
 * Writes `events` chunk after chunk; on the first failure, the indexes of that chunk's events and
 * every later one's (those before are committed). More events than a chunk are ordered by key
 * first, so that a key's minute rows are upserted about once per batch, not once per chunk.
 */
function writeChunks(into: EventTables, events: readonly StoredEvent[]): { from: number[]; error: string } | undefined {
  const order = events.length > MAX_CHUNK_EVENTS ? byKey(events) : Array.from(events.keys());
  for (let at = 0; at < order.length; at += MAX_CHUNK_EVENTS) {
    if (at > 0) Bun.sleepSync(PAUSE_MS);
    try {
      into.write(order.slice(at, at + MAX_CHUNK_EVENTS).map((i) => events[i]!));
    } catch (error) {
      return { from: order.slice(at), error: (error as Error).message };
    }
  }
  return undefined;
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
