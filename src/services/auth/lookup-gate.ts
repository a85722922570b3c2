/**
 * A bound on the root-key lookups a cluster node sends PostgreSQL at once: each holds a pool
 * connection, and a flood of distinct made-up keys (none of which the unknown-key cache can hold
 * back) must not take the connections the other requests need. Up to `running` lookups run; up to
 * WAITING_PER_RUNNING times as many wait their turn in order (briefly: a lookup is one indexed
 * read); a lookup beyond those is refused at once with 503 `overloaded` and Retry-After, as a
 * request over TOLLGATE_MAX_REQUESTS_IN_FLIGHT is, rather than queued without end.
 */
import { AppError } from "../../errors/app-error.ts";

/** Waiting lookups per running one: enough for bursts of cold but real keys (after a restart). */
export const WAITING_PER_RUNNING = 16;

export class LookupGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly running: number) {}

  /** Runs `lookup` once a slot is free; rejects with 503 `overloaded` when too many wait already. */
  async run<T>(lookup: () => T | Promise<T>): Promise<T> {
    if (this.active >= this.running) {
      if (this.waiting.length >= this.running * WAITING_PER_RUNNING) {
        throw new AppError("overloaded", { detail: "Too many root keys that are not cached are being looked up at once; retry shortly.", retryAfterS: 1 });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await lookup();
    } finally {
      // The slot passes to the next waiter as it is (active unchanged), or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Lookups running and waiting, for tests. */
  get load(): { running: number; waiting: number } {
    return { running: this.active, waiting: this.waiting.length };
  }
}
