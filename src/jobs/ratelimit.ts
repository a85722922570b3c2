/**
 * Rate-limit state jobs: the flush of changed windows to SQLite (every `ratelimitFlushMs` and on
 * stop), the compaction of the window log when it has grown (one short step per turn of the event
 * loop, so requests are answered between steps), and the prune of windows that no longer weigh
 * anything (every minute), which also reports windows the memory caps gave up or refused since its
 * last run: one warning a minute at most, however hard the caps are hit.
 */
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { RatelimitStore, SlidingWindowLimiter } from "../services/ratelimit/index.ts";
import type { ScheduledJob } from "./scheduler.ts";

export interface RatelimitJobDeps {
  store: RatelimitStore;
  limiter: Pick<SlidingWindowLimiter, "stats">;
}

/** Writes the windows changed since the last flush; returns how many rows were written. */
export function runRatelimitFlushOnce(deps: Pick<RatelimitJobDeps, "store">, nowMs: number): number {
  return deps.store.flush(nowMs);
}

/** Drops expired windows from memory and SQLite; returns how many of each. */
export function runRatelimitPruneOnce(deps: Pick<RatelimitJobDeps, "store">, nowMs: number): { memory: number; stored: number } {
  return deps.store.prune(nowMs);
}

export interface RatelimitPersistence {
  /** The minute-by-minute prune, for the scheduler. */
  pruneJob: ScheduledJob;
  /** Stops the periodic flush and writes whatever is left; call after the server stopped accepting requests. */
  flushAndStop(): void;
}

/**
 * Restores the saved windows (call before listening) and starts the periodic flush. Every
 * `flushMs` the changed windows are queued and written one chunk per turn of the event loop, so
 * requests are answered between chunks; then a due compaction runs the same way. A failed flush is
 * logged and its windows are written with the next one; a failed compaction step is logged and the
 * compaction resumes after the next flush. On stop, whatever is queued or changed is written at once.
 */
export function startRatelimitPersistence(
  deps: RatelimitJobDeps, opts: { clock: Clock; logger: Logger; flushMs: number },
): RatelimitPersistence {
  const { store } = deps;
  const restored = store.restore(opts.clock.now());
  if (restored > 0) opts.logger.info("restored rate-limit windows", { windows: restored });
  let stopped = false;
  let working = false;
  let reported = deps.limiter.stats();
  const prune = () => {
    runRatelimitPruneOnce(deps, opts.clock.now());
    const now = deps.limiter.stats();
    const evicted = now.evicted - reported.evicted;
    const unkept = now.unkept - reported.unkept;
    reported = now;
    if (evicted > 0 || unkept > 0) {
      opts.logger.warn("rate-limit windows at their memory caps: workspaces gave up their least recently used windows, or got none kept", {
        evicted, unkept, windows: now.windows, bytes: now.bytes,
      });
    }
  };
  /** One step of background work; whether another is due. */
  const step = (): boolean => {
    const nowMs = opts.clock.now();
    if (store.flushQueued) {
      try {
        return store.flushStep(nowMs) || store.compactionDue();
      } catch (e) {
        opts.logger.error("rate-limit flush failed; retrying with the next flush", { error: (e as Error).message });
        return false;
      }
    }
    try {
      return store.compactStep(nowMs);
    } catch (e) {
      opts.logger.error("rate-limit log compaction step failed; resuming after the next flush", { error: (e as Error).message });
      return false;
    }
  };
  const work = () => {
    working = !stopped && step();
    if (working) setImmediate(work);
  };
  const timer = setInterval(() => {
    store.beginFlush();
    if (working || !(store.flushQueued || store.compactionDue())) return;
    working = true;
    setImmediate(work);
  }, opts.flushMs);
  timer.unref();
  return {
    pruneJob: { name: "ratelimit-prune", pattern: "* * * * *", run: prune },
    flushAndStop() {
      stopped = true;
      clearInterval(timer);
      try {
        runRatelimitFlushOnce(deps, opts.clock.now());
      } catch (e) {
        opts.logger.error("rate-limit flush on stop failed", { error: (e as Error).message });
      }
    },
  };
}
