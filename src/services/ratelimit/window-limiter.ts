/**
 * What checks rate-limit windows, whichever holds them: the in-memory SlidingWindowLimiter answers at
 * once (the embedded mode), RedisWindowLimiter with a promise (the cluster mode). And what a check
 * answers while Redis cannot be reached, by the operator's choice (TOLLGATE_REDIS_UNREACHABLE).
 */
import type { Clock } from "../../lib/clock.ts";
import type { Maybe } from "../../storage/work.ts";
import type { BatchResult, LimitRequest, LimitResult } from "./sliding-window.ts";
import { WindowStoreUnavailable } from "./redis-windows.ts";

export interface WindowLimiter {
  check(req: LimitRequest): Maybe<LimitResult>;
  /** Checks every limit at one instant; charges all costs only if all pass. */
  checkAll(reqs: readonly LimitRequest[]): Maybe<BatchResult>;
}

/**
 * `open`: a check Redis cannot answer passes, as if the counter were empty (nothing is counted);
 * `closed`: it is refused, as if the limit were spent. Other errors pass through.
 */
export type UnreachablePolicy = "open" | "closed";

/** A limiter whose checks answer by `policy` while `inner`'s store is unreachable; `onUnreachable` counts them. */
export function tolerateUnreachable(inner: WindowLimiter, policy: UnreachablePolicy, clock: Clock, onUnreachable: () => void = () => undefined): WindowLimiter {
  const answer = (req: LimitRequest): LimitResult => ({
    success: policy === "open" || req.cost === 0,
    limit: req.limit,
    remaining: policy === "open" ? Math.max(0, req.limit - req.cost) : 0,
    resetMs: clock.now() + req.durationMs,
  });
  /** Rethrows what is not the store being away; counts what is. */
  const unreachable = (error: unknown): void => {
    if (!(error instanceof WindowStoreUnavailable)) throw error;
    onUnreachable();
  };
  return {
    async check(req) {
      try {
        return await inner.check(req);
      } catch (error) {
        unreachable(error);
        return answer(req);
      }
    },
    async checkAll(reqs) {
      try {
        return await inner.checkAll(reqs);
      } catch (error) {
        unreachable(error);
        const results = reqs.map(answer);
        return { success: results.every((r) => r.success), results };
      }
    },
  };
}
