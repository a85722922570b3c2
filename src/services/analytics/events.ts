/**
 * The verification event pipeline. Recording packs the event record into an in-memory buffer
 * (packed-events.ts; the verification hot path pays nothing else); `flush` hands it to a writer,
 * which commits each event with its rollups and totals in the same transaction. Boot flushes on a
 * timer (an event is about one interval late at most), on stop, and when the buffer is full.
 * Every `handOverAt` events a batch is also handed over, on the next turn of the event loop, for
 * the writer to hold until the flush: each hand-over wakes the writer thread, which costs more
 * than the copy it makes, so they are few, and the writer still commits a second's events together.
 */
import { EventWriteError, type EventBatchWriter } from "./writers.ts";
import type { VerificationEvent, VerificationRecorder } from "./types.ts";
import { EventPacker, packedCount, unpackRecords, type PackedEvents } from "./packed-events.ts";
import type { RatelimitDecisionAggregator } from "./ratelimit-decisions.ts";

/** Buffer bound: 100k events. */
export const DEFAULT_MAX_BUFFERED = 100_000;

/** Events per early hand-over: about half a second of verifications on a 2-core machine at full load. */
export const DEFAULT_HAND_OVER_AT = 10_000;

export class VerificationEventSink implements VerificationRecorder {
  private buffer = new EventPacker();
  private inFlight = 0;
  private failing = false;
  private droppedCount = 0;
  /** Settles when every batch handed to the writer so far is committed or has failed. */
  private lastWrite: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly maxBuffered: number;
  private readonly handOverAt: number;
  /** Batches were handed over to be held since the last flush: a flush must commit them even with nothing buffered. */
  private holding = false;

  /** `decisions`: rate-limit decisions, flushed with the events (ratelimit-decisions.ts). */
  constructor(private readonly deps: { writer: EventBatchWriter; maxBuffered?: number; handOverAt?: number; decisions?: RatelimitDecisionAggregator }) {
    this.maxBuffered = Math.max(1, deps.maxBuffered ?? DEFAULT_MAX_BUFFERED);
    this.handOverAt = Math.max(1, deps.handOverAt ?? DEFAULT_HAND_OVER_AT);
  }

  /** Buffers `event`; after close, the service is stopping and nothing is recorded. */
  record(event: VerificationEvent): void {
    if (this.closed) return;
    this.buffer.add(event);
    const count = this.buffer.length;
    if (count >= this.maxBuffered) this.onFull();
    // Outside the verification that filled the batch; a failure keeps the events buffered for the periodic flush to retry and report.
    else if (count % this.handOverAt === 0 && !this.failing) setImmediate(() => this.handOver(true).catch(() => {}));
  }

  /** Events not yet written: buffered, or handed to the writer and not yet committed. */
  get pending(): number {
    return this.buffer.length + this.inFlight;
  }

  /**
   * Events dropped since the last call: because the writer could not take a full buffer, or
   * because it failed without naming the events it did not commit (against EventBatchWriter's contract).
   */
  takeDropped(): number {
    const n = this.droppedCount;
    this.droppedCount = 0;
    return n;
  }

  /**
   * Hands every buffered event to the writer; resolves with how many once they, and any batch
   * handed over before, are committed. On failure
   * the events not committed are buffered again, ahead of newer ones, and the error is thrown.
   * The rate-limit decisions are flushed alongside (a failure of theirs is thrown too).
   */
  flush(): Promise<number> {
    const events = this.handOver(false);
    const decisions = this.deps.decisions?.flush();
    return decisions === undefined ? events : Promise.all([events, decisions]).then(([n]) => n);
  }

  /** `hold`: the writer may keep the batch until the next one not held. */
  private handOver(hold: boolean): Promise<number> {
    // A flush also waits for batches already handed over by another (the timer's, a full buffer's):
    // once it resolves, every event recorded before it is written or buffered again.
    const earlier = this.lastWrite;
    if (this.buffer.length === 0 && (hold || !this.holding)) return earlier.then(() => 0);
    this.holding = hold;
    const batch = this.buffer.take();
    const size = packedCount(batch);
    const written = this.writeBatch(batch, hold);
    this.inFlight += size;
    // Settles once this batch and every earlier one have, whatever order the writer answers in.
    this.lastWrite = earlier.then(() => written).then(() => {}, () => {});
    return this.settled(written, earlier, size);
  }

  /**
   * Waits for a batch handed over and for the earlier ones. A failed write names the
   * events it did not commit (EventBatchWriter's contract), and those are buffered again.
   */
  private async settled(written: Promise<void>, earlier: Promise<void>, size: number): Promise<number> {
    try {
      await written;
      await earlier;
      this.failing = false;
      return size;
    } catch (error) {
      this.failing = true;
      if (error instanceof EventWriteError) this.rebuffer(error.unwritten, 0);
      else this.droppedCount += size;
      throw error;
    } finally {
      this.inFlight -= size;
    }
  }

  /** The writer's write, with a synchronous throw turned into a rejection naming the whole batch. */
  private writeBatch(batch: PackedEvents, hold: boolean): Promise<void> {
    try {
      return this.deps.writer.write(batch, { hold });
    } catch (error) {
      return Promise.reject(error instanceof EventWriteError ? error : new EventWriteError((error as Error).message, unpackRecords(batch)));
    }
  }

  /** Buffers `first` ahead of what is buffered, of which the oldest `drop` go (a rare path: both are unpacked). */
  private rebuffer(first: readonly VerificationEvent[], drop: number): void {
    const newer = unpackRecords(this.buffer.take());
    for (const e of first) this.buffer.add(e);
    for (const e of newer.slice(drop)) this.buffer.add(e);
  }

  /** Flushes what is buffered, then closes the writer. */
  async close(): Promise<void> {
    this.closed = true;
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
    this.rebuffer([], drop);
    this.droppedCount += drop;
  }
}
