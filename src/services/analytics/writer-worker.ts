/**
 * The writer thread of verification events (see WorkerEventWriter): its own connection to
 * analytics.db, at background priority. Batches handed over to be held wait for one that is not
 * (the sink's flush) or for HOLD_EVENTS; then all are written together, ordered by key, since the
 * minute rollup's rows of neighbouring keys share pages: with many keys busy, sorted events write
 * far fewer pages. Transactions hold MAX_CHUNK_EVENTS events at most, with a pause between them
 * for the main thread's retention prune; after them the minute rows of minutes past are folded into
 * the hour, day and month rollups (fold.ts), in slices paced the same way.
 */
import { runInBackground } from "../../lib/thread-priority.ts";
import { leaveCheckpointsToCheckpointer, openStorage, type Storage } from "../../storage/db.ts";
import { foldableBefore, RollupFolder } from "./fold.ts";
import { MAX_CHUNK_EVENTS } from "./raw-events.ts";
import { EventTables } from "./tables.ts";
import type { StoredEvent } from "./types.ts";
import { packedCount, unpackEvents, type PackedEvents } from "./packed-events.ts";
import type { WriterReply, WriterRequest } from "./writers.ts";
import { answerDecisions } from "./ratelimit-decisions.ts";

declare var self: Worker;

/** The most events held before they are written without waiting for a flush: a flush interval of them, at full load and the default interval. */
const HOLD_EVENTS = 50_000;
/** Between two transactions: longer than SQLite's first busy-handler sleep (1 ms). */
const PAUSE_MS = 2;
/** Minute rows per fold slice: few enough that a slice holds the write lock briefly even when every row is a new coarser row. */
const FOLD_SLICE_ROWS = 500;
/** The longest the fold runs after a write before the worker takes its next message; it goes on after the next write. */
const FOLD_BUDGET_MS = 100;

let storage: Storage | undefined;
let tables: EventTables | undefined;
let folder: RollupFolder | undefined;
/** Batches held, in the order they came, still packed (a few arrays each, rather than an object per event for the collector to keep). */
let held: { id: number; events: PackedEvents }[] = [];

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
    writeHeld();
    storage?.close();
    storage = tables = folder = undefined;
    postMessage({ type: "closed" } satisfies WriterReply);
    return;
  }
  if (request.type === "ratelimit-decisions") {
    postMessage(answerDecisions(storage?.sqlite, request) satisfies WriterReply);
    return;
  }
  held.push({ id: request.id, events: { ...request.events, text: new TextDecoder().decode(request.events.text) } });
  if (!request.hold || held.reduce((n, b) => n + packedCount(b.events), 0) >= HOLD_EVENTS) writeHeld();
};

/** Writes the batches held, answers each (written, or failed with the indexes of its events not committed), and folds. */
function writeHeld(): void {
  if (held.length === 0) return;
  const batches = held;
  held = [];
  const events = batches.flatMap((b) => unpackEvents(b.events));
  const failed = tables ? writeChunks(tables, events) : { from: Array.from(events.keys()), error: "the writer was not opened" };
  let first = 0;
  for (const { id, events: packed } of batches) {
    const length = packedCount(packed);
    const unwritten = (failed?.from ?? []).filter((at) => at >= first && at < first + length).map((at) => at - first);
    first += length;
    postMessage((unwritten.length === 0 ? { type: "written", id } : { type: "failed", id, error: failed!.error, unwritten }) satisfies WriterReply);
  }
  if (tables && folder) fold(folder, tables.latestEventMs);
}

/**
 * Writes `events` chunk after chunk, ordered by key; on the first failure, the positions of that
 * chunk's events and every later one's (those before are committed).
 */
function writeChunks(into: EventTables, events: readonly StoredEvent[]): { from: number[]; error: string } | undefined {
  const order = byKey(events);
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

/** The positions of `events` ordered by key id (as text), each key's in the order they came. */
function byKey(events: readonly StoredEvent[]): number[] {
  const ofKey = new Map<string, number[]>();
  events.forEach((e, i) => {
    const positions = ofKey.get(e.keyId);
    if (positions) positions.push(i);
    else ofKey.set(e.keyId, [i]);
  });
  return [...ofKey.keys()].sort().flatMap((key) => ofKey.get(key)!);
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
