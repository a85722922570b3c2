/** The nightly credit refill (00:00 UTC), also run once at start to apply refills missed while down. */
import type { Clock } from "../lib/clock.ts";
import type { RecordBackend } from "../storage/records/index.ts";
import type { Maybe } from "../storage/work.ts";
import type { KeyCacheInvalidator } from "../services/key-cache/index.ts";
import type { CreditBalances } from "../services/credits/index.ts";
import { refillDueKeys } from "../services/keys/index.ts";
import type { ScheduledJob } from "./scheduler.ts";

export interface RefillDeps {
  records: RecordBackend;
  cache: KeyCacheInvalidator;
  credits: CreditBalances;
}

/** One pass of the refill job at `nowMs`; answers how many keys were refilled. */
export function runRefillOnce(deps: RefillDeps, nowMs: number): Maybe<number> {
  return refillDueKeys(deps, nowMs);
}

/** Daily at 00:00 UTC. A pass refills whatever is due at the clock's time, so a late run loses nothing. */
export function refillJob(deps: RefillDeps, clock: Clock): ScheduledJob {
  return {
    name: "credit-refill", pattern: "0 0 * * *", run: async () => {
      await runRefillOnce(deps, clock.now());
    },
  };
}
