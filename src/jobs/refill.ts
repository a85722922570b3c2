/** The nightly credit refill (00:00 UTC), also run once at start to apply refills missed while down. */
import type { Storage } from "../storage/db.ts";
import type { KeyCacheInvalidator } from "../services/key-cache/index.ts";
import { refillDueKeys } from "../services/keys/index.ts";

export interface RefillDeps {
  storage: Storage;
  cache: KeyCacheInvalidator;
}

/** One pass of the refill job at `nowMs`; returns how many keys were refilled. */
export function runRefillOnce(deps: RefillDeps, nowMs: number): number {
  return refillDueKeys(deps, nowMs);
}
