/**
 * Where a batch of events goes. `SqliteEventWriter` writes on the calling thread (the CLI, tests,
 * tools). `WorkerEventWriter`, used by `serve`, hands batches to a worker thread with its own
 * connection (writer-worker.ts), so the SQLite work of analytics never runs on the thread that
 * answers verifications; the main thread only posts the packed batch (packed-events.ts: two
 * arrays and a text, sent as bytes) and keeps it until the worker answers, to give back the
 * events it did not commit.
 */
import type { Storage } from "../../storage/db.ts";
import { RollupFolder } from "./fold.ts";
import { EventTables } from "./tables.ts";
import type { VerificationEvent } from "./types.ts";
import { unpackEvents, unpackRecords, type PackedEvents } from "./packed-events.ts";
import { DecisionWrites, writeDecisionRows, type DecisionRow, type DecisionRowWriter, type DecisionsReply, type DecisionsRequest } from "./ratelimit-decisions.ts";

export interface EventBatchWriter {
  /**
   * Resolves once every event of the batch is committed; else rejects with an EventWriteError naming
   * those that are not. The batch is the writer's from then on. `hold`: the writer may keep the
   * batch, unresolved, until it is given one not held (or holds enough to write on its own).
   */
  write(events: PackedEvents, opts?: { hold?: boolean }): Promise<void>;
  /** Releases the writer's resources once the last write has resolved. */
  close(): Promise<void>;
}

/** A write that failed, with the events it did not commit (all of them, or the chunks after a failed one). */
export class EventWriteError extends Error {
  constructor(message: string, readonly unwritten: readonly VerificationEvent[]) {
    super(message);
    this.name = "EventWriteError";
  }
}

export class SqliteEventWriter implements EventBatchWriter, DecisionRowWriter {
  private tables: EventTables | undefined;
  private folder: RollupFolder | undefined;

  constructor(private readonly storage: Storage) {}

  /**
   * Writes synchronously, before returning: a caller that does not await still finds the rows.
   * Then folds every minute row into the coarser rollups (this writer serves tools and tests, where
   * a write is small and rare).
   */
  write(events: PackedEvents): Promise<void> {
    try {
      // Prepared on first use: a CLI process builds this writer too and never writes an event.
      this.tables ??= new EventTables(this.storage);
      this.tables.write(unpackEvents(events));
    } catch (error) {
      return Promise.reject(new EventWriteError((error as Error).message, unpackRecords(events)));
    }
    // The events are committed whatever the fold does: a failed slice rolled back, and the rows it
    // leaves are read through the views and folded next time.
    try {
      this.folder ??= new RollupFolder(this.storage);
      this.folder.foldAll(Number.MAX_SAFE_INTEGER);
    } catch {}
    return Promise.resolve();
  }

  /** Writes synchronously, like `write`. */
  writeRatelimitDecisions(rows: readonly DecisionRow[]): Promise<void> {
    try {
      writeDecisionRows(this.storage.sqlite, rows);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Messages to the writer worker. */
export type WriterRequest =
  /** `autoCheckpoint: false` when another thread checkpoints the WAL (serve's checkpointer). */
  | { type: "open"; path: string; autoCheckpoint: boolean }
  | { type: "write"; id: number; events: Omit<PackedEvents, "text"> & { text: Uint8Array }; hold: boolean }
  | { type: "close" }
  | DecisionsRequest;

/** Messages from the writer worker. */
export type WriterReply =
  | { type: "written"; id: number }
  /** `unwritten`: the indexes of the batch's events not committed. */
  | { type: "failed"; id: number; error: string; unwritten: readonly number[] }
  | { type: "closed" }
  | DecisionsReply;

export class WorkerEventWriter implements EventBatchWriter, DecisionRowWriter {
  private worker: Worker | undefined;
  private nextId = 1;
  /** Each batch in flight as sent (to give back the events not committed), by id. */
  private readonly waiting = new Map<number, { sent: PackedEvents; resolve(): void; reject(error: EventWriteError): void }>();
  private closed: (() => void) | undefined;
  private readonly decisionWrites = new DecisionWrites();

  /**
   * `dbPath`: the database file the worker opens its own connection to. `autoCheckpoint` false
   * leaves the WAL to a checkpointer of its own (as `serve` runs): SQLite's automatic checkpoint
   * after a commit would otherwise copy pages and sync the file on this thread.
   */
  constructor(private readonly dbPath: string, private readonly opts: { autoCheckpoint?: boolean } = {}) {}

  write(events: PackedEvents, opts: { hold?: boolean } = {}): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { sent: events, resolve, reject });
      // Sent as UTF-8 bytes in transferred buffers (the batch kept here stays whole): a posted string or array is copied into the message.
      const numbers = events.numbers.slice(), text = new TextEncoder().encode(events.text);
      worker.postMessage({ type: "write", id, events: { numbers, lengths: events.lengths, text }, hold: opts.hold ?? false } satisfies WriterRequest, [numbers.buffer, text.buffer]);
    });
  }

  writeRatelimitDecisions(rows: readonly DecisionRow[]): Promise<void> {
    const worker = this.worker ?? this.start();
    const { request, written } = this.decisionWrites.send(rows);
    worker.postMessage(request satisfies WriterRequest);
    return written;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      this.closed = resolve;
      worker.postMessage({ type: "close" } satisfies WriterRequest);
    });
    worker.terminate();
    this.worker = undefined;
  }

  /** Started on the first write, so a process that verifies nothing runs no thread. */
  private start(): Worker {
    const worker = new Worker(new URL("./writer-worker.ts", import.meta.url));
    worker.onmessage = (event: MessageEvent<WriterReply>) => this.onReply(event.data);
    worker.onerror = (event: ErrorEvent) => this.onCrash(`verification event writer failed: ${event.message}`);
    // The worker never keeps the process alive on its own; stop() closes it.
    worker.unref();
    worker.postMessage({ type: "open", path: this.dbPath, autoCheckpoint: this.opts.autoCheckpoint ?? true } satisfies WriterRequest);
    this.worker = worker;
    return worker;
  }

  private onReply(reply: WriterReply): void {
    if (reply.type === "closed") {
      this.closed?.();
      return;
    }
    if (reply.type === "ratelimit-decisions-written") {
      this.decisionWrites.answered(reply);
      return;
    }
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    if (reply.type === "written") waiter.resolve();
    else waiter.reject(new EventWriteError(reply.error, unpackRecords(waiter.sent, reply.unwritten)));
  }

  /**
   * A crashed worker fails every batch in flight, as unwritten (a chunk it committed just before
   * would be written twice: rarer and less harmful than losing the batch); the next write starts a new one.
   */
  private onCrash(message: string): void {
    this.worker?.terminate();
    this.worker = undefined;
    for (const { sent, reject } of this.waiting.values()) reject(new EventWriteError(message, unpackRecords(sent)));
    this.waiting.clear();
    this.decisionWrites.failAll(message);
    this.closed?.();
  }
}
