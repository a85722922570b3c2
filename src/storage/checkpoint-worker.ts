/** The checkpointer's thread (see checkpointer.ts): a checkpoint pass every interval on its own connection. */
import { Database } from "bun:sqlite";
import { runInBackground } from "../lib/thread-priority.ts";
import { checkpointPass, type CheckpointOptions } from "./checkpoint-pass.ts";

declare var self: Worker;

export type CheckpointRequest = { type: "start"; path: string; options: CheckpointOptions } | { type: "stop" };

let db: Database | undefined;
let timer: Timer | undefined;

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  const request = event.data;
  if (request.type === "start") {
    runInBackground();
    db = new Database(request.path);
    const { options } = request;
    db.run(`PRAGMA busy_timeout = ${options.restartBusyTimeoutMs}`);
    timer = setInterval(() => checkpoint(options), options.intervalMs);
    return;
  }
  clearInterval(timer);
  db?.close();
  db = undefined;
  postMessage("stopped");
};

function checkpoint(options: CheckpointOptions): void {
  try {
    if (db) checkpointPass(db, options.restartAtFrames);
  } catch {
    // A failed checkpoint changes nothing; the next interval tries again.
  }
}
