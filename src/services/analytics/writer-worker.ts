/**
 * The writer thread of verification events (see WorkerEventWriter): its own connection to the
 * database, batches written in short transactions by key, with a pause between them so that the
 * main thread's own writes (credit spends, changes) get the write lock promptly. Staged batches
 * wait for the next committing one and are written with it, so that a key's events of the whole
 * flush interval update its rollups once.
 */
import { openStorage, type Storage } from "../../storage/db.ts";
import { CHUNK_EVENTS, chunksByKey, EventTables } from "./tables.ts";
import { toStored, type VerificationEvent } from "./types.ts";
import type { WriterReply, WriterRequest } from "./writers.ts";

declare var self: Worker;

/** Between two chunk transactions: longer than SQLite's first busy-handler sleep (1 ms). */
const PAUSE_MS = 2;

interface Batch {
  id: number;
  events: VerificationEvent[];
}

let storage: Storage | undefined;
let tables: EventTables | undefined;
let staged: Batch[] = [];

const reply = (message: WriterReply) => postMessage(message);

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const request = event.data;
  if (request.type === "open") {
    storage = openStorage(request.path);
    tables = new EventTables(storage);
    return;
  }
  if (request.type === "close") {
    if (tables && staged.length > 0) write(tables, takeStaged());
    storage?.close();
    storage = undefined;
    tables = undefined;
    reply({ type: "closed" });
    return;
  }
  if (!tables) {
    reply({ type: "failed", id: request.id, error: "the writer was not opened", unwritten: request.events });
    return;
  }
  staged.push({ id: request.id, events: JSON.parse(request.events) as VerificationEvent[] });
  if (request.commit) write(tables, takeStaged());
};

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
  const entries = batches.flatMap((b) => b.events.map((e) => ({ keyId: e.keyId, timeMs: e.timeMs, event: e, batch: b.id })));
  const chunks = chunksByKey(entries, CHUNK_EVENTS);
  for (const [i, chunk] of chunks.entries()) {
    try {
      into.write(chunk.map((entry) => toStored(entry.event)));
    } catch (error) {
      const unwritten = chunks.slice(i).flat();
      for (const b of batches) {
        const mine = unwritten.filter((entry) => entry.batch === b.id).map((entry) => entry.event);
        if (mine.length === 0) reply({ type: "written", id: b.id });
        else reply({ type: "failed", id: b.id, error: (error as Error).message, unwritten: JSON.stringify(mine) });
      }
      return;
    }
    if (i < chunks.length - 1) Bun.sleepSync(PAUSE_MS);
  }
  for (const b of batches) reply({ type: "written", id: b.id });
}
