/** The checkpointer's thread (see checkpointer.ts): a PASSIVE checkpoint every interval on its own connection. */
import { Database } from "bun:sqlite";

declare var self: Worker;

export type CheckpointRequest = { type: "start"; path: string; intervalMs: number } | { type: "stop" };

let db: Database | undefined;
let timer: Timer | undefined;

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const request = event.data;
  if (request.type === "start") {
    db = new Database(request.path);
    timer = setInterval(checkpoint, request.intervalMs);
    return;
  }
  clearInterval(timer);
  db?.close();
  db = undefined;
  postMessage("stopped");
};

function checkpoint(): void {
  try {
    db?.run("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // A failed passive checkpoint changes nothing; the next interval tries again.
  }
}
