/**
 * Analytics jobs: the flush of buffered verification events and rate-limit decisions (every
 * `analyticsFlushMs` and on stop, so an event is written about one interval late at most) and the
 * daily retention prune (of analytics.db, or in the cluster mode of PostgreSQL's tables). The flush
 * runs in both modes; analytics.db, and so its prune, exists only in the embedded mode.
 */
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import type { Storage } from "../storage/db.ts";
import { pruneAnalytics, type AnalyticsRetention, type PruneCounts, type RatelimitDecisionAggregator, type VerificationEventSink } from "../services/analytics/index.ts";
import type { ScheduledJob } from "./scheduler.ts";

export interface AnalyticsFlushDeps {
  events: VerificationEventSink;
  /** Rate-limit decisions, flushed by `events`' flush; here for the log of those dropped. */
  decisions?: Pick<RatelimitDecisionAggregator, "takeDropped">;
}

/** analytics.db and how long its tables keep their rows (the embedded mode). */
export interface AnalyticsDbRetention {
  storage: Storage;
  retentionDays: AnalyticsRetention;
}

/** Writes every buffered event with its rollups; resolves with how many once committed. */
export function runAnalyticsFlushOnce(deps: Pick<AnalyticsFlushDeps, "events">): Promise<number> {
  return deps.events.flush();
}

/** Deletes analytics.db's rows past each table's retention at `nowMs`; returns how many per table. */
export function runAnalyticsPruneOnce(deps: AnalyticsDbRetention, nowMs: number): Promise<PruneCounts> {
  return pruneAnalytics(deps.storage, deps.retentionDays, nowMs);
}

/**
 * The daily retention prune, pruning with `prune` at the clock's time: analytics.db's
 * (`analyticsDbPruneJob`), or the cluster's tables in PostgreSQL (services/analytics/pg-retention.ts,
 * which boot-cluster runs as a leased job, once per cluster). Daily at 00:20 UTC, away from the
 * midnight credit refill and the audit prune.
 */
export function analyticsPruneJob(prune: (nowMs: number) => Promise<unknown>, clock: Clock): ScheduledJob {
  return { name: "analytics-prune", pattern: "20 0 * * *", run: async () => { await prune(clock.now()); } };
}

/** The daily prune of analytics.db (the embedded mode). */
export function analyticsDbPruneJob(deps: AnalyticsDbRetention, clock: Clock): ScheduledJob {
  return analyticsPruneJob((nowMs) => runAnalyticsPruneOnce(deps, nowMs), clock);
}

/** Repeats `run` every `ms` until the returned function is called; tests pass their own. */
export type Every = (ms: number, run: () => Promise<void>) => () => void;

const everyInterval: Every = (ms, run) => {
  const timer = setInterval(() => void run(), ms);
  // The flush must not keep a stopping process alive; stop() flushes the rest.
  timer.unref();
  return () => clearInterval(timer);
};

export interface AnalyticsPipeline {
  /** Stops the periodic flush, writes whatever is buffered and closes the writer; call after the server stopped accepting requests. */
  flushAndStop(): Promise<void>;
}

/** Starts the periodic flush. A failed flush is logged; its events are written with the next one. */
export function startAnalyticsPipeline(
  deps: AnalyticsFlushDeps, opts: { logger: Logger; flushMs: number; every?: Every },
): AnalyticsPipeline {
  let flushing = false;
  const reportDropped = () => {
    const dropped = deps.events.takeDropped();
    if (dropped > 0) opts.logger.error("dropped verification events: the buffer was full and could not be written", { dropped });
    const decisionsDropped = deps.decisions?.takeDropped() ?? 0;
    if (decisionsDropped > 0) opts.logger.error("rate-limit decisions not counted: too many namespaces and minutes were pending (TOLLGATE_ANALYTICS_RATELIMIT_PENDING_ROWS)", { dropped: decisionsDropped });
  };
  const tick = async () => {
    // A slow write is not overlapped by the next tick: the next one takes whatever has gathered.
    if (flushing) return;
    flushing = true;
    try {
      await runAnalyticsFlushOnce(deps);
    } catch (e) {
      opts.logger.error("verification event flush failed; retrying with the next flush", { error: (e as Error).message, pending: deps.events.pending });
    } finally {
      flushing = false;
      reportDropped();
    }
  };
  const stop = (opts.every ?? everyInterval)(opts.flushMs, tick);
  return {
    async flushAndStop() {
      stop();
      try {
        await deps.events.close();
      } catch (e) {
        opts.logger.error("final verification event flush failed", { error: (e as Error).message, lost: deps.events.pending });
      }
      reportDropped();
    },
  };
}
