/**
 * How many events the writer thread puts in its next transaction. A chunk should hold
 * analytics.db's write lock for about `targetMs`, so that the retention prune on the main thread
 * never waits long for it; what an event costs varies widely (little when a few keys are busy,
 * much more when every event is a new rollup row of one of 100,000 keys), so a fixed count either
 * holds the lock for tens of milliseconds or commits far more often than it needs to. The size
 * follows the measured cost per event of the chunks before, between `min` and `max`.
 */
export class ChunkSizer {
  private perEventMs: number;

  constructor(private readonly targetMs: number, private readonly min: number, private readonly max: number) {
    // Until a chunk is measured, assume the cheap case: the first chunk is `max` events.
    this.perEventMs = targetMs / max;
  }

  /** Events for the next chunk. */
  get size(): number {
    return Math.max(this.min, Math.min(this.max, Math.floor(this.targetMs / this.perEventMs)));
  }

  /** A chunk of `events` took `elapsedMs`; the estimate moves halfway towards it. */
  observe(events: number, elapsedMs: number): void {
    if (events <= 0 || !(elapsedMs >= 0)) return;
    this.perEventMs = (this.perEventMs + elapsedMs / events) / 2;
  }
}
