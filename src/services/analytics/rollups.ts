/**
 * Rollups: verification counts per UTC minute, hour, day and month. A batch of events is
 * aggregated in memory (one row per bucket, key, identity, outcome and tag set) before it is
 * written, so a busy key costs one upsert per bucket and batch, not one per event.
 */
import { getTableName } from "drizzle-orm";
import {
  verificationsPerDay, verificationsPerHour, verificationsPerMinute, verificationsPerMonth,
  verificationTotalsPerDay, verificationTotalsPerHour, verificationTotalsPerMinute, verificationTotalsPerMonth,
} from "../../storage/schema/index.ts";
import type { StoredEvent } from "./types.ts";

export interface RollupRow {
  /** Bucket start, Unix ms (UTC). */
  time: number;
  workspaceId: string;
  keySpaceId: string;
  keyId: string;
  identityId: string;
  externalId: string;
  outcome: string;
  tags: string;
  count: number;
  spentCredits: number;
  latencySumMs: number;
  latencyMaxMs: number;
}

export type Granularity = "minute" | "hour" | "day" | "month";

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Start of the UTC bucket of `granularity` that holds `timeMs`. */
export function bucketStartMs(granularity: Granularity, timeMs: number): number {
  switch (granularity) {
    case "minute": return Math.floor(timeMs / MINUTE_MS) * MINUTE_MS;
    case "hour": return Math.floor(timeMs / HOUR_MS) * HOUR_MS;
    case "day": return Math.floor(timeMs / DAY_MS) * DAY_MS;
    case "month": {
      const d = new Date(timeMs);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
  }
}

/** The rollup table of each granularity. */
export const ROLLUP_TABLES: Readonly<Record<Granularity, string>> = {
  minute: getTableName(verificationsPerMinute),
  hour: getTableName(verificationsPerHour),
  day: getTableName(verificationsPerDay),
  month: getTableName(verificationsPerMonth),
};

/** The totals table of each granularity: its rollup summed over keys, identities and tags. */
export const TOTALS_TABLES: Readonly<Record<Granularity, string>> = {
  minute: getTableName(verificationTotalsPerMinute),
  hour: getTableName(verificationTotalsPerHour),
  day: getTableName(verificationTotalsPerDay),
  month: getTableName(verificationTotalsPerMonth),
};

export const GRANULARITIES: readonly Granularity[] = ["minute", "hour", "day", "month"];

/** A row of a totals table: one bucket, key space and outcome. */
export interface TotalRow {
  time: number;
  workspaceId: string;
  keySpaceId: string;
  outcome: string;
  count: number;
  spentCredits: number;
}

/** The fields a rollup row is grouped by, besides its bucket. */
type Dimensions = Pick<StoredEvent, "workspaceId" | "keySpaceId" | "keyId" | "identityId" | "externalId" | "outcome" | "tags">;

/** Adds one event (or a finer row) to the row of its bucket in `rows`. */
function accumulate(rows: Map<string, RollupRow>, time: number, d: Dimensions, count: number, spentCredits: number, latencySumMs: number, latencyMaxMs: number): void {
  const id = `${time}\u0000${d.workspaceId}\u0000${d.keySpaceId}\u0000${d.keyId}\u0000${d.identityId}\u0000${d.outcome}\u0000${d.tags}`;
  const row = rows.get(id);
  if (row) {
    row.count += count;
    row.spentCredits += spentCredits;
    row.latencySumMs += latencySumMs;
    row.latencyMaxMs = Math.max(row.latencyMaxMs, latencyMaxMs);
    return;
  }
  rows.set(id, {
    time, workspaceId: d.workspaceId, keySpaceId: d.keySpaceId, keyId: d.keyId, identityId: d.identityId, externalId: d.externalId,
    outcome: d.outcome, tags: d.tags, count, spentCredits, latencySumMs, latencyMaxMs,
  });
}

/** One row per (bucket, key, identity, outcome, tags) of `events`: the rollup tables' primary key. */
export function aggregate(events: readonly StoredEvent[], granularity: Granularity): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const e of events) accumulate(rows, bucketStartMs(granularity, e.timeMs), e, 1, e.spentCredits, e.latencyMs, e.latencyMs);
  return [...rows.values()];
}

/** Folds rows of a finer granularity into `granularity`; exact because UTC buckets nest. */
function coarsen(rows: readonly RollupRow[], granularity: Granularity): RollupRow[] {
  const out = new Map<string, RollupRow>();
  for (const r of rows) accumulate(out, bucketStartMs(granularity, r.time), r, r.count, r.spentCredits, r.latencySumMs, r.latencyMaxMs);
  return [...out.values()];
}

/** The rows of every rollup for `events`: minutes from the events, each coarser level from the one below. */
export function rollupsOf(events: readonly StoredEvent[]): Record<Granularity, RollupRow[]> {
  const minute = aggregate(events, "minute");
  const hour = coarsen(minute, "hour");
  const day = coarsen(hour, "day");
  return { minute, hour, day, month: coarsen(day, "month") };
}

/** `rows` (of one granularity) summed per bucket, key space and outcome: the totals tables' primary key. */
export function totalsOf(rows: readonly RollupRow[]): TotalRow[] {
  const out = new Map<string, TotalRow>();
  for (const r of rows) {
    const id = `${r.time}\u0000${r.workspaceId}\u0000${r.keySpaceId}\u0000${r.outcome}`;
    const total = out.get(id);
    if (total) {
      total.count += r.count;
      total.spentCredits += r.spentCredits;
    } else {
      out.set(id, { time: r.time, workspaceId: r.workspaceId, keySpaceId: r.keySpaceId, outcome: r.outcome, count: r.count, spentCredits: r.spentCredits });
    }
  }
  return [...out.values()];
}
