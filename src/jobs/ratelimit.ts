/**
 * Rate-limit state jobs: the flush of changed windows to SQLite (every `ratelimitFlushMs` and on
 * stop), the compaction of the window log when it has grown (one short step per turn of the event
 * loop, so requests are answered between steps), and the prune of windows that no longer weigh
 * anything (every minute).
 */
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { RatelimitStore } from "../services/ratelimit/index.ts";
import type { ScheduledJob } from "./scheduler.ts";

export interface RatelimitJobDeps {
  store: RatelimitStore;
}

/** Writes the windows changed since the last flush; returns how many rows were written. */
export function runRatelimitFlushOnce(deps: RatelimitJobDeps, nowMs: number): number {
  return deps.store.flush(nowMs);
}

/** Drops expired windows from memory and SQLite; returns how many of each. */
export function runRatelimitPruneOnce(deps: RatelimitJobDeps, nowMs: number): { memory: number; stored: number } {
  return deps.store.prune(nowMs);
}

export interface RatelimitPersistence {
  /** The minute-by-minute prune, for the scheduler. */
  pruneJob: ScheduledJob;
  /** Stops the periodic flush and writes whatever is left; call after the server stopped accepting requests. */
  flushAndStop(): void;
}

/**
 * Restores the saved windows (call before listening) and starts the periodic flush. A failed
 * flush is logged; its windows are written with the next one. After a flush, a due compaction
 * runs step by step, each step in its own turn of the event loop; a failed step is logged and the
 * compaction resumes after the next flush.
 */
export function startRatelimitPersistence(
  deps: RatelimitJobDeps, opts: { clock: Clock; logger: Logger; flushMs: number },
): RatelimitPersistence {
  const restored = deps.store.restore(opts.clock.now());
  if (restored > 0) opts.logger.info("restored rate-limit windows", { windows: restored });
  let stopped = false;
  let compacting = false;
  const compactStep = () => {
    try {
      compacting = !stopped && deps.store.compactStep(opts.clock.now());
    } catch (e) {
      compacting = false;
      opts.logger.error("rate-limit log compaction step failed; resuming after the next flush", { error: (e as Error).message });
    }
    if (compacting) setImmediate(compactStep);
  };
  const flush = () => {
    try {
      runRatelimitFlushOnce(deps, opts.clock.now());
    } catch (e) {
      opts.logger.error("rate-limit flush failed; retrying with the next flush", { error: (e as Error).message });
      return;
    }
    if (!compacting && !stopped && deps.store.compactionDue()) {
      compacting = true;
      setImmediate(compactStep);
    }
  };
  const timer = setInterval(flush, opts.flushMs);
  timer.unref();
  return {
    pruneJob: { name: "ratelimit-prune", pattern: "* * * * *", run: () => void runRatelimitPruneOnce(deps, opts.clock.now()) },
    flushAndStop() {
      stopped = true;
      clearInterval(timer);
      flush();
    },
  };
}
