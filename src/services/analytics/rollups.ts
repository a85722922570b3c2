/**
 * Rollups: verification counts per UTC minute, hour, day and month. A batch of events is
 * aggregated in memory (one row per bucket, key, identity, outcome and tag set) before it is
 * written, so a busy key costs one upsert per bucket and batch, not one per event.
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

/** Rows of one granularity grouped by their dimensions, each group's rows in bucket order (a batch spans a bucket or two). */
type Grouped = Map<string, RollupRow[]>;

function sameDimensions(a: Dimensions, b: Dimensions): boolean {
  return a.keyId === b.keyId && a.outcome === b.outcome && a.identityId === b.identityId && a.tags === b.tags
    && a.keySpaceId === b.keySpaceId && a.workspaceId === b.workspaceId;
}

/** The row of bucket `time` in `buckets`, looked for from the newest: events come in time order or nearly. */
function rowAt(buckets: RollupRow[], time: number): RollupRow | undefined {
  for (let i = buckets.length - 1; i >= 0; i--) if (buckets[i]!.time === time) return buckets[i];
  return undefined;
}

/** Adds event `e` to the row of bucket `time` in `buckets`. */
function accumulate(buckets: RollupRow[], time: number, e: StoredEvent): void {
  const row = rowAt(buckets, time);
  if (row) {
    row.count += 1;
    row.spentCredits += e.spentCredits;
    row.latencySumMs += e.latencyMs;
    row.latencyMaxMs = Math.max(row.latencyMaxMs, e.latencyMs);
    return;
  }
  buckets.push({
    time, workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId, identityId: e.identityId, externalId: e.externalId,
    outcome: e.outcome, tags: e.tags, count: 1, spentCredits: e.spentCredits, latencySumMs: e.latencyMs, latencyMaxMs: e.latencyMs,
  });
}

/** The events grouped as rows of `granularity`; events of the same dimensions in a row (as sorted by key) share one lookup. */
function group(events: readonly StoredEvent[], granularity: Granularity): Grouped {
  const out: Grouped = new Map();
  let previous: StoredEvent | undefined;
  let buckets: RollupRow[] | undefined;
  for (const e of events) {
    if (!previous || !buckets || !sameDimensions(previous, e)) {
      const id = `${e.workspaceId}\u0000${e.keySpaceId}\u0000${e.keyId}\u0000${e.identityId}\u0000${e.outcome}\u0000${e.tags}`;
      buckets = out.get(id);
      if (!buckets) out.set(id, buckets = []);
    }
    previous = e;
    accumulate(buckets, bucketStartMs(granularity, e.timeMs), e);
  }
  return out;
}

function rowsOf(grouped: Grouped): RollupRow[] {
  const rows: RollupRow[] = [];
  for (const buckets of grouped.values()) for (const row of buckets) rows.push(row);
  return rows;
}

/** One row per (bucket, key, identity, outcome, tags) of `events`: the rollup tables' primary key. */
export function aggregate(events: readonly StoredEvent[], granularity: Granularity): RollupRow[] {
  return rowsOf(group(events, granularity));
}

/**
 * `rows` summed per bucket, key space and outcome: the totals tables' primary key. The buckets are
 * the rows' own, or those of a coarser `granularity` (exact, as UTC buckets nest).
 */
export function totalsOf(rows: readonly RollupRow[], granularity?: Granularity): TotalRow[] {
  const out = new Map<string, TotalRow>();
  for (const r of rows) {
    const time = granularity ? bucketStartMs(granularity, r.time) : r.time;
    const id = `${time}\u0000${r.workspaceId}\u0000${r.keySpaceId}\u0000${r.outcome}`;
    const total = out.get(id);
    if (total) {
      total.count += r.count;
      total.spentCredits += r.spentCredits;
    } else {
      out.set(id, { time, workspaceId: r.workspaceId, keySpaceId: r.keySpaceId, outcome: r.outcome, count: r.count, spentCredits: r.spentCredits });
    }
  }
  return [...out.values()];
}
