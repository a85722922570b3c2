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
import {
  columnsOf, IDENTITY, inOrder, KEY, KEY_SPACE, LATENCY, NUMBERS_PER_EVENT, OUTCOME, REFS_PER_EVENT, SPENT, storedEventAt, TAGS, TIME, WORKSPACE,
  type EventColumns, type Positions,
} from "./columns.ts";
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
 * Rows that share one cheap map key (a key id, a key space), scanned from the newest while they
 * are few, and looked up by an index of their other fields once there are more than SCAN_LIMIT:
 * a key whose every event carries another tag set must not make the aggregation quadratic.
 */
interface RowGroup<R> {
  rows: R[];
  index?: Map<string, R>;
}

const SCAN_LIMIT = 8;

/**
 * The row of bucket `time` in `group` that `matches` `of`: scanned from the newest while the group
 * is small (events come in time order or nearly), else looked up by `idOf` in its index.
 */
function findRow<R extends { time: number }, T>(group: RowGroup<R>, time: number, of: T, matches: (row: R, of: T) => boolean, idOf: (time: number, of: T) => string): R | undefined {
  if (group.index) return group.index.get(idOf(time, of));
  const rows = group.rows;
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    if (row.time === time && matches(row, of)) return row;
  }
  return undefined;
}

/** Adds `row` to `group`, indexing the group once it holds more than SCAN_LIMIT rows. */
function addRow<R>(group: RowGroup<R>, row: R, idOf: (r: R) => string): void {
  group.rows.push(row);
  if (group.index) group.index.set(idOf(row), row);
  else if (group.rows.length > SCAN_LIMIT) group.index = new Map(group.rows.map((r) => [idOf(r), r]));
}

/** A rollup row as it is aggregated: its strings as references into the columns' dictionary. */
interface Accumulated {
  time: number;
  /** The event's offset in `refs` it was made from: its references are read from there. */
  refs: number;
  count: number;
  spentCredits: number;
  latencySumMs: number;
  latencyMaxMs: number;
}

/** The references besides the key that a rollup row is keyed by (the external id follows the identity). */
const KEYED = [OUTCOME, IDENTITY, TAGS, KEY_SPACE, WORKSPACE] as const;

/**
 * One row per (bucket, key, identity, outcome, tag set) of the events at `positions`: the rollup
 * tables' primary key. Rows are grouped by key reference, and consecutive events of one key (as
 * the writer sorts them) share one lookup; a key's events nearly always share their identity,
 * outcome and tag set, so a key holds a row or two per bucket, found by comparing references.
 */
export function aggregateColumns(c: EventColumns, positions: Positions, granularity: Granularity): RollupRow[] {
  const { refs, numbers } = c;
  const byKey = new Map<number, RowGroup<Accumulated>>();
  const made: Accumulated[] = [];
  const same = (row: Accumulated, r: number): boolean => {
    for (let f = 0; f < KEYED.length; f++) if (refs[row.refs + KEYED[f]!] !== refs[r + KEYED[f]!]) return false;
    return true;
  };
  const id = (time: number, r: number): string => `${time}:${refs[r + OUTCOME]}:${refs[r + IDENTITY]}:${refs[r + TAGS]}:${refs[r + KEY_SPACE]}:${refs[r + WORKSPACE]}`;
  const idOf = (row: Accumulated): string => id(row.time, row.refs);
  let rows: RowGroup<Accumulated> | undefined;
  let key = -1;
  for (let p = 0; p < positions.length; p++) {
    const i = positions[p]!;
    const r = i * REFS_PER_EVENT;
    const n = i * NUMBERS_PER_EVENT;
    if (refs[r + KEY] !== key) {
      key = refs[r + KEY]!;
      rows = byKey.get(key);
      if (!rows) byKey.set(key, rows = { rows: [] });
    }
    const time = bucketStartMs(granularity, numbers[n + TIME]!);
    const spent = numbers[n + SPENT]!;
    const latency = numbers[n + LATENCY]!;
    const row = findRow(rows!, time, r, same, id);
    if (row) {
      row.count += 1;
      row.spentCredits += spent;
      row.latencySumMs += latency;
      row.latencyMaxMs = Math.max(row.latencyMaxMs, latency);
    } else {
      const fresh = { time, refs: r, count: 1, spentCredits: spent, latencySumMs: latency, latencyMaxMs: latency };
      addRow(rows!, fresh, idOf);
      made.push(fresh);
    }
  }
  return made.map((a) => {
    const { workspaceId, keySpaceId, keyId, identityId, externalId, outcome, tags } = storedEventAt(c, a.refs / REFS_PER_EVENT);
    return { time: a.time, workspaceId, keySpaceId, keyId, identityId, externalId, outcome, tags, count: a.count, spentCredits: a.spentCredits, latencySumMs: a.latencySumMs, latencyMaxMs: a.latencyMaxMs };
  });
}

/** One row per (bucket, key, identity, outcome, tags) of `events`: the rollup tables' primary key. */
export function aggregate(events: readonly StoredEvent[], granularity: Granularity): RollupRow[] {
  return aggregateColumns(columnsOf(events), inOrder(events.length), granularity);
}

/** What totalsOf sums: rollup rows, or total rows of a finer granularity. */
type Summable = Pick<RollupRow, "time" | "workspaceId" | "keySpaceId" | "outcome" | "count" | "spentCredits">;

/**
 * `rows` summed per bucket, key space and outcome: the totals tables' primary key. The buckets are
 * the rows' own, or those of a coarser `granularity` (exact, as UTC buckets nest). The rows are
 * grouped by key space, a string they share, and a key space holds few totals (a bucket or two
 * per outcome), so this makes no map key of its own per row.
 */
export function totalsOf(rows: readonly Summable[], granularity?: Granularity): TotalRow[] {
  const byKeySpace = new Map<string, RowGroup<TotalRow>>();
  const out: TotalRow[] = [];
  for (const r of rows) {
    const time = granularity ? bucketStartMs(granularity, r.time) : r.time;
    let group = byKeySpace.get(r.keySpaceId);
    if (!group) byKeySpace.set(r.keySpaceId, group = { rows: [] });
    const total = findRow(group, time, r, sameTotal, totalId);
    if (total) {
      total.count += r.count;
      total.spentCredits += r.spentCredits;
    } else {
      const made = { time, workspaceId: r.workspaceId, keySpaceId: r.keySpaceId, outcome: r.outcome, count: r.count, spentCredits: r.spentCredits };
      addRow(group, made, totalIdOf);
      out.push(made);
    }
  }
  return out;
}

/** A total's fields other than its key space, for the index of a key space's totals. */
const totalId = (time: number, r: Pick<TotalRow, "workspaceId" | "outcome">): string => `${time}\u0000${r.workspaceId}\u0000${r.outcome}`;
const totalIdOf = (t: TotalRow): string => totalId(t.time, t);
const sameTotal = (t: TotalRow, r: Summable): boolean => t.outcome === r.outcome && t.workspaceId === r.workspaceId;
