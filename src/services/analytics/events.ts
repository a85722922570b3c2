/**
 * The verification event pipeline. Recording is a synchronous push onto an in-memory buffer (the
 * verification hot path pays nothing else); `flush` hands the buffer to a writer, which commits
 * each event with its four rollups in the same transaction, so rollups always equal the raw events
 * committed. Boot flushes on a timer (so an event is about one interval late at most) and on stop.
 * A full buffer is handed over at once rather than dropping events.
 */
import type { EventBatchWriter } from "./writers.ts";
import { EventWriteError } from "./writers.ts";
import type { VerificationEvent, VerificationRecorder } from "./types.ts";

/** Buffer bound: about 100k small objects, a few tens of MB at most. */
export const DEFAULT_MAX_BUFFERED = 100_000;

export class VerificationEventSink implements VerificationRecorder {
  private buffer: VerificationEvent[] = [];
  private inFlight = 0;
  private failing = false;
  private droppedCount = 0;
  private readonly maxBuffered: number;

  constructor(private readonly deps: { writer: EventBatchWriter; maxBuffered?: number }) {
    this.maxBuffered = Math.max(1, deps.maxBuffered ?? DEFAULT_MAX_BUFFERED);
  }

  record(event: VerificationEvent): void {
    this.buffer.push(event);
    if (this.buffer.length >= this.maxBuffered) this.onFull();
  }

  /** Events not yet written: buffered, or handed to the writer and not yet committed. */
  get pending(): number {
    return this.buffer.length + this.inFlight;
  }

  /** Events dropped because the writer could not take a full buffer, since the last call. */
  takeDropped(): number {
    const n = this.droppedCount;
    this.droppedCount = 0;
    return n;
  }

  /**
   * Hands every buffered event to the writer; resolves with how many once they are committed. On
   * failure the events not committed are buffered again, ahead of newer ones, and the error is thrown.
   */
  async flush(): Promise<number> {
    const batch = this.buffer;
    if (batch.length === 0) return 0;
    this.buffer = [];
    this.inFlight += batch.length;
    try {
      await this.deps.writer.write(batch);
      this.failing = false;
      return batch.length;
    } catch (error) {
      this.failing = true;
      this.buffer = (error instanceof EventWriteError ? error.unwritten : batch).concat(this.buffer);
      throw error;
    } finally {
      this.inFlight -= batch.length;
    }
  }

  /** Flushes what is buffered, then closes the writer. */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      await this.deps.writer.close();
    }
  }

  private onFull(): void {
    if (!this.failing && this.inFlight < this.maxBuffered) {
      // The periodic flush reports a failure; here the batch only has to leave the buffer.
      this.flush().catch(() => {});
      return;
    }
    // The writer fails, or already holds a full buffer it cannot commit: verification must go on
    // and memory must stay bounded, so the oldest half is dropped and counted for the log.
    const drop = this.buffer.length - Math.floor(this.maxBuffered / 2);
    this.buffer.splice(0, drop);
    this.droppedCount += drop;
  }
}
