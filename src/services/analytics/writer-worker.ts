/**
 * The writer thread of verification events (see WorkerEventWriter): its own connection to the
 * database, batches written in short transactions by key, with a pause between them so that the
 * main thread's own writes (credit spends, changes) get the write lock promptly.
 */
import { openStorage, type Storage } from "../../storage/db.ts";
import { CHUNK_EVENTS, chunksByKey, EventTables } from "./tables.ts";
import { toStored, type VerificationEvent } from "./types.ts";
import type { WriterReply, WriterRequest } from "./writers.ts";

declare var self: Worker;

/** Between two chunk transactions: longer than SQLite's first busy-handler sleep (1 ms). */
const PAUSE_MS = 2;

let storage: Storage | undefined;
let tables: EventTables | undefined;

const reply = (message: WriterReply) => postMessage(message);

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const request = event.data;
  if (request.type === "open") {
    storage = openStorage(request.path);
    tables = new EventTables(storage);
    return;
  }
  if (request.type === "close") {
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
  write(tables, request.id, JSON.parse(request.events) as VerificationEvent[]);
};

/** Writes chunk after chunk; on the first failure, replies with the events of that chunk and every later one. */
function write(into: EventTables, id: number, events: VerificationEvent[]): void {
  const chunks = chunksByKey(events, CHUNK_EVENTS);
  for (const [i, chunk] of chunks.entries()) {
    try {
      into.write(chunk.map(toStored));
    } catch (error) {
      reply({ type: "failed", id, error: (error as Error).message, unwritten: JSON.stringify(chunks.slice(i).flat()) });
      return;
    }
    if (i < chunks.length - 1) Bun.sleepSync(PAUSE_MS);
  }
  reply({ type: "written", id });
}
