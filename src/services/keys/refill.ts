/**
 * Credit refills (upstream §6.1). A refill sets `remaining` to the refill amount and never lowers a
 * larger balance. Daily keys are due at every 00:00 UTC; monthly keys on their `refillDay`, or on
 * the last day of a month shorter than it. A key is refilled when its last refill is older than its
 * most recent due time, so the same pass both runs the nightly job and catches up after downtime.
 */
import { and, isNotNull, isNull } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";
import { keys } from "../../storage/schema/index.ts";
import type { KeyCacheInvalidator } from "../key-cache/index.ts";
import type { CreditBalances } from "../credits/index.ts";

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** The latest 00:00 UTC at or before `nowMs` when a key with this refill day was due. */
export function lastRefillDueMs(nowMs: number, refillDay: number | null): number {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  if (refillDay === null) return today;
  const d = new Date(today);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const dueThisMonth = Math.min(refillDay, daysInMonth(year, month));
  if (d.getUTCDate() >= dueThisMonth) return Date.UTC(year, month, dueThisMonth);
  const prevYear = month === 0 ? year - 1 : year;
  const prevMonth = (month + 11) % 12;
  return Date.UTC(prevYear, prevMonth, Math.min(refillDay, daysInMonth(prevYear, prevMonth)));
}

/** Refills every live key that is due at `nowMs`; returns how many keys were refilled. */
export function refillDueKeys(deps: { storage: Storage; cache: KeyCacheInvalidator; credits: CreditBalances }, nowMs: number): number {
  const { db, sqlite } = deps.storage;
  const candidates = db.select({ id: keys.id, remaining: keys.remaining, amount: keys.refillAmount, day: keys.refillDay, last: keys.lastRefillAt })
    .from(keys).where(and(isNotNull(keys.refillAmount), isNull(keys.deletedAt))).all();
  const due = candidates.filter((k) => (k.last ?? 0) < lastRefillDueMs(nowMs, k.day));
  if (due.length === 0) return 0;
  // The refill compares with and sets keys.remaining: it must hold the balance first.
  deps.credits.settle(due.map((k) => k.id));
  const update = sqlite.query<unknown, [number, string]>(
    "UPDATE keys SET remaining = CASE WHEN remaining IS NULL OR remaining < refill_amount THEN refill_amount ELSE remaining END, last_refill_at = ?1 WHERE id = ?2",
  );
  inTransaction(deps.storage, () => {
    for (const k of due) update.run(nowMs, k.id);
  });
  for (const k of due) deps.cache.keyChanged(k.id);
  return due.length;
}
