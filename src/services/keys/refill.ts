/**
 * Credit refills (upstream §6.1). A refill sets `remaining` to the refill amount and never lowers a
 * larger balance. Daily keys are due at every 00:00 UTC; monthly keys on their `refillDay`, or on
 * the last day of a month shorter than it. A key is refilled when its last refill is older than its
 * most recent due time, so the same pass both runs the nightly job and catches up after downtime.
 * One unit of work per workspace, as a unit changes the records of one workspace.
 */
import type { RecordBackend } from "../../storage/records/index.ts";
import { step, then, type Maybe } from "../../storage/work.ts";
import { andThen } from "./and-then.ts";
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

/** Refills every live key that is due at `nowMs`; answers how many keys were refilled. */
export function refillDueKeys(deps: { records: RecordBackend; cache: KeyCacheInvalidator; credits: CreditBalances }, nowMs: number): Maybe<number> {
  const candidates = deps.records.read((r) => step(r.keys.refillCandidates()));
  return andThen(candidates, (all) => {
    const due = all.filter((k) => (k.lastRefillAt ?? 0) < lastRefillDueMs(nowMs, k.refillDay));
    if (due.length === 0) return 0;
    // The refill compares with and sets keys.remaining: it must hold the balance first.
    deps.credits.settle(due.map((k) => k.id));
    const byWorkspace = Map.groupBy(due, (k) => k.workspaceId);
    let written: Maybe<void> = undefined;
    for (const [workspaceId, dueKeys] of byWorkspace) {
      written = andThen(written, () => deps.records.write(workspaceId, function* (r) {
        for (const k of dueKeys) yield r.keys.refill(k.id, nowMs);
      }));
    }
    return then(written, () => {
      for (const k of due) deps.cache.keyChanged(k.id);
      return due.length;
    });
  });
}
