/**
 * WAL checkpoints off the main thread. A connection whose commit takes the WAL past SQLite's
 * auto-checkpoint threshold runs the checkpoint inside that COMMIT: it copies a thousand pages into
 * the database file and syncs both files, tens of milliseconds in which the event loop answers
 * nothing. `serve` turns auto-checkpoints off on its connection and starts this instead: a worker
 * thread with its own connection runs a PASSIVE checkpoint every interval. A passive checkpoint
 * never waits for or blocks a writer; once the WAL has grown past a bound, a RESTART checkpoint
 * empties it (see checkpoint-pass.ts), so that sustained writes cannot grow it without end.
 */
import type { CheckpointOptions } from "./checkpoint-pass.ts";
import type { CheckpointRequest } from "./checkpoint-worker.ts";

export class Checkpointer {
  private worker: Worker | undefined;

  /** Starts checkpointing the database at `dbPath` every `options.intervalMs`. */
  constructor(dbPath: string, options: CheckpointOptions) {
    const worker = new Worker(new URL("./checkpoint-worker.ts", import.meta.url));
    // Never keeps the process alive on its own; stop() ends it.
    worker.unref();
    worker.postMessage({ type: "start", path: dbPath, options } satisfies CheckpointRequest);
    this.worker = worker;
  }

  /** Stops the thread once its connection is closed (so the final TRUNCATE checkpoint finds no other connection). */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    await new Promise<void>((resolve) => {
      worker.onmessage = () => resolve();
      worker.onerror = () => resolve();
      worker.postMessage({ type: "stop" } satisfies CheckpointRequest);
    });
    worker.terminate();
  }
}
