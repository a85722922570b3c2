/**
 * Rollups: verification counts per UTC minute, hour, day and month. A batch of events is
 * aggregated in memory (one row per bucket, key, identity, outcome and tag set) before it is
 * written, so a busy key costs one upsert per bucket and chunk, not one per event.
 */
import { getTableName } from "drizzle-orm";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import {
  verificationsPerDay, verificationsPerHour, verificationsPerMinute, verificationsPerMonth,
  verificationTotalsPerDay, verificationTotalsPerHour, verificationTotalsPerMinute, verificationTotalsPerMonth,
} from "../../storage/schema/index.ts";
import type { StoredEvent } from "./types.ts";

/** The fields a rollup row is grouped by, besides its bucket. */
type Dimensions = Pick<StoredEvent, "workspaceId" | "keySpaceId" | "keyId" | "identityId" | "externalId" | "outcome" | "tags">;

export interface RollupRow extends Dimensions {
  /** Bucket start, Unix ms (UTC). */
  time: number;
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

/** The rollup tables' primary key, as SQL: the conflict target of every upsert into them. */
export const ROLLUP_KEY_SQL = getTableConfig(verificationsPerMinute).primaryKeys[0]!.columns.map((c) => c.name).join(", ");

/** How an upsert into a rollup table adds the row it brings (`excluded`) to the row already there. */
export const ROLLUP_ADD_SQL = `"count" = "count" + excluded."count",
         spent_credits = spent_credits + excluded.spent_credits,
         latency_sum_ms = latency_sum_ms + excluded.latency_sum_ms,
         latency_max_ms = max(latency_max_ms, excluded.latency_max_ms)`;

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

/**
 * `rows` summed per the map key `keyOf` gives each: into a fresh row made by `make` for the first
 * of a key, by `add` for each row after it.
 */
function sumBy<In, Out>(rows: readonly In[], keyOf: (r: In) => string, make: (r: In) => Out, add: (into: Out, r: In) => void): Out[] {
  const byKey = new Map<string, Out>();
  for (const r of rows) {
    const key = keyOf(r);
    const row = byKey.get(key);
    if (row) add(row, r);
    else byKey.set(key, make(r));
  }
  return [...byKey.values()];
}

const SEP = "\u0000";

/** One row per (bucket, key, identity, outcome, tags) of `events`: the rollup tables' primary key. */
export function aggregate(events: readonly StoredEvent[], granularity: Granularity): RollupRow[] {
  return sumBy(
    events,
    (e) => [bucketStartMs(granularity, e.timeMs), e.workspaceId, e.keySpaceId, e.keyId, e.identityId, e.outcome, e.tags].join(SEP),
    (e) => ({
      time: bucketStartMs(granularity, e.timeMs), workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId, identityId: e.identityId,
      externalId: e.externalId, outcome: e.outcome, tags: e.tags, count: 1, spentCredits: e.spentCredits, latencySumMs: e.latencyMs, latencyMaxMs: e.latencyMs,
    }),
    (row, e) => {
      row.count += 1;
      row.spentCredits += e.spentCredits;
      row.latencySumMs += e.latencyMs;
      row.latencyMaxMs = Math.max(row.latencyMaxMs, e.latencyMs);
    },
  );
}

/** What totalsOf sums: rollup rows, or total rows of a finer granularity. */
type Summable = Pick<RollupRow, "time" | "workspaceId" | "keySpaceId" | "outcome" | "count" | "spentCredits">;

/**
 * `rows` summed per bucket, key space and outcome: the totals tables' primary key. The buckets are
 * the rows' own, or those of a coarser `granularity` (exact, as UTC buckets nest).
 */
export function totalsOf(rows: readonly Summable[], granularity?: Granularity): TotalRow[] {
  const timeOf = (r: Summable): number => (granularity ? bucketStartMs(granularity, r.time) : r.time);
  return sumBy(
    rows,
    (r) => [timeOf(r), r.workspaceId, r.keySpaceId, r.outcome].join(SEP),
    (r) => ({ time: timeOf(r), workspaceId: r.workspaceId, keySpaceId: r.keySpaceId, outcome: r.outcome, count: r.count, spentCredits: r.spentCredits }),
    (total, r) => {
      total.count += r.count;
      total.spentCredits += r.spentCredits;
    },
  );
}
