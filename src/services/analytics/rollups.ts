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

/** A row of a totals table (one bucket, key space and outcome), and what totalsOf sums: rollup rows, or totals of a finer granularity. */
export type TotalRow = Pick<RollupRow, "time" | "workspaceId" | "keySpaceId" | "outcome" | "count" | "spentCredits">;

/**
 * One row per (bucket, key, identity, outcome, tags) of `events`: the rollup tables' primary key.
 * Grouped by key id first (a key belongs to one workspace and key space), then among that key's few
 * rows by comparison, which costs less than a composite map key made for every event.
 */
export function aggregate(events: readonly StoredEvent[], granularity: Granularity): RollupRow[] {
  const byKey = new Map<string, RollupRow[]>();
  const rows: RollupRow[] = [];
  for (const e of events) {
    const time = bucketStartMs(granularity, e.timeMs);
    let ofKey = byKey.get(e.keyId);
    if (!ofKey) byKey.set(e.keyId, (ofKey = []));
    const row = findRow(ofKey, time, e);
    if (row) {
      row.count += 1;
      row.spentCredits += e.spentCredits;
      row.latencySumMs += e.latencyMs;
      if (e.latencyMs > row.latencyMaxMs) row.latencyMaxMs = e.latencyMs;
      continue;
    }
    const made: RollupRow = {
      time, workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId, identityId: e.identityId,
      externalId: e.externalId, outcome: e.outcome, tags: e.tags, count: 1, spentCredits: e.spentCredits, latencySumMs: e.latencyMs, latencyMaxMs: e.latencyMs,
    };
    ofKey.push(made);
    rows.push(made);
  }
  return rows;
}

function findRow(ofKey: readonly RollupRow[], time: number, e: StoredEvent): RollupRow | undefined {
  for (const r of ofKey) {
    if (r.time === time && r.outcome === e.outcome && r.tags === e.tags && r.identityId === e.identityId && r.workspaceId === e.workspaceId && r.keySpaceId === e.keySpaceId) return r;
  }
  return undefined;
}

/**
 * `rows` summed per bucket, key space and outcome: the totals tables' primary key. The buckets are
 * the rows' own, or those of a coarser `granularity` (exact, as UTC buckets nest).
 */
export function totalsOf(rows: readonly TotalRow[], granularity?: Granularity): TotalRow[] {
  const totals = new Map<string, TotalRow>();
  for (const r of rows) {
    const time = granularity ? bucketStartMs(granularity, r.time) : r.time;
    const key = `${time}\u0000${r.workspaceId}\u0000${r.keySpaceId}\u0000${r.outcome}`;
    const total = totals.get(key);
    if (total) {
      total.count += r.count;
      total.spentCredits += r.spentCredits;
    } else {
      totals.set(key, { time, workspaceId: r.workspaceId, keySpaceId: r.keySpaceId, outcome: r.outcome, count: r.count, spentCredits: r.spentCredits });
    }
  }
  return [...totals.values()];
}
