/**
 * Retention of the analytics tables: each keeps its rows for its own number of days (a rate-limit
 * decisions table those of the rollup of its granularity). A rollup row goes only once its whole
 * bucket is past retention, so the bucket that holds the cutoff keeps counting every event it had. Rows are deleted in small batches with a yield between them, so a
 * large prune never holds the write lock, or the event loop, long enough to delay a verification.
 */
import type { Storage } from "../../storage/db.ts";
import { getTableName } from "drizzle-orm";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import {
  verificationEventBatches, verificationsPerDay, verificationsPerHour, verificationsPerMinute, verificationsPerMonth,
  verificationTotalsPerDay, verificationTotalsPerHour, verificationTotalsPerMinute, verificationTotalsPerMonth,
  ratelimitDecisionsPerDay, ratelimitDecisionsPerHour, ratelimitDecisionsPerMinute, ratelimitDecisionsPerMonth,
} from "../../storage/schema/index.ts";
import { RollupFolder } from "./fold.ts";
import { MAX_CHUNK_EVENTS } from "./raw-events.ts";
import { bucketStartMs, GRANULARITIES, ROLLUP_TABLES, TOTALS_TABLES, type Granularity } from "./rollups.ts";
import { DECISION_TABLES } from "./ratelimit-decisions.ts";

/** Days each table keeps its rows. */
export interface AnalyticsRetention {
  raw: number;
  minute: number;
  hour: number;
  day: number;
  month: number;
}

/** Rows deleted from the raw table and each rollup, from each totals table (`totals`) and rate-limit decisions table (`ratelimits`). */
export type PruneCounts = Record<keyof AnalyticsRetention, number> & { totals: Record<Granularity, number>; ratelimits: Record<Granularity, number> };

const DAY_MS = 86_400_000;
/**
 * Rows per delete statement, kept small: one statement is the longest the prune holds the event
 * loop at once, on tables of millions of rollup rows.
 */
const DEFAULT_BATCH = 1_000;

/** Delete statements run without a yield at most, when each deletes little (many small workspaces). */
const YIELD_EVERY = 50;

const RAW_TABLE = getTableName(verificationEventBatches);

/** How the prune finds and counts the rows of a table. */
interface Pruned {
  /** What names a row in a delete. */
  key: string;
  /** The column a row is past retention by: all of it is older than the cutoff. */
  time: string;
  /** What a row counts for, when it holds several events. */
  events?: string;
}

/**
 * Each table's rows: the raw events' batch rows by id, past retention once their latest event is,
 * and counted by their events; the rollup and totals tables' rows by their primary-key columns, in
 * key order and from the schema (a key that begins with workspace_id and time, so those tables
 * need neither an index on time nor a rowid).
 */
const PRUNED: ReadonlyMap<string, Pruned> = new Map([
  [RAW_TABLE, { key: "id", time: "max_time", events: "event_count" }],
  ...[
    verificationsPerMinute, verificationsPerHour, verificationsPerDay, verificationsPerMonth,
    verificationTotalsPerMinute, verificationTotalsPerHour, verificationTotalsPerDay, verificationTotalsPerMonth,
    ratelimitDecisionsPerMinute, ratelimitDecisionsPerHour, ratelimitDecisionsPerDay, ratelimitDecisionsPerMonth,
  ].map((t): [string, Pruned] => [getTableName(t), { key: getTableConfig(t).primaryKeys[0]!.columns.map((c) => c.name).join(", "), time: "time" }]),
]);

/** Where each table's retention ends at `nowMs`: rows older go (Unix ms). */
export type RetentionCutoffs = Record<keyof AnalyticsRetention, number>;

/**
 * The cutoff of the raw events and of each granularity's tables (rollups, totals, rate-limit
 * decisions) at `nowMs`. A bucket goes only once all of it is past retention: its cutoff is the
 * start of the bucket that holds the retention's end.
 */
export function retentionCutoffs(retention: AnalyticsRetention, nowMs: number): RetentionCutoffs {
  const cutoffs: RetentionCutoffs = { raw: nowMs - retention.raw * DAY_MS, minute: 0, hour: 0, day: 0, month: 0 };
  for (const g of GRANULARITIES) cutoffs[g] = bucketStartMs(g, nowMs - retention[g] * DAY_MS);
  return cutoffs;
}

/** Deletes, from every analytics table, the rows older than its retention at `nowMs`; returns how many per table. */
export async function pruneAnalytics(
  storage: Storage, retention: AnalyticsRetention, nowMs: number, batchSize = DEFAULT_BATCH,
): Promise<PruneCounts> {
  const counts: PruneCounts = {
    raw: 0, minute: 0, hour: 0, day: 0, month: 0, totals: { minute: 0, hour: 0, day: 0, month: 0 }, ratelimits: { minute: 0, hour: 0, day: 0, month: 0 },
  };
  const pacer = new Pacer(batchSize);
  const cutoffs = retentionCutoffs(retention, nowMs);
  counts.raw = await pruneTable(storage, RAW_TABLE, cutoffs.raw, pacer);
  for (const g of GRANULARITIES) {
    const cutoffMs = cutoffs[g];
    // The writer folds minutes after later events; after a last burst nothing comes later, so the
    // minute rows about to go are folded here first, or the coarser rollups would lose them.
    if (g === "minute") new RollupFolder(storage).foldAll(cutoffMs, batchSize);
    counts[g] = await pruneTable(storage, ROLLUP_TABLES[g], cutoffMs, pacer);
    counts.totals[g] = await pruneTable(storage, TOTALS_TABLES[g], cutoffMs, pacer);
    counts.ratelimits[g] = await pruneTable(storage, DECISION_TABLES[g], cutoffMs, pacer);
  }
  return counts;
}

/**
 * Deletes the rows of `table` older than `cutoffMs`, one workspace at a time, each batch being some
 * of that workspace's rows past the cutoff, matched by their key; returns the rows (for the raw
 * table, the events) deleted. The workspaces are found by seeking the index that begins with
 * workspace_id from one to the next, not by reading it whole.
 */
async function pruneTable(storage: Storage, table: string, cutoffMs: number, pacer: Pacer): Promise<number> {
  const pruned = PRUNED.get(table);
  if (!pruned) throw new Error(`${table} is not an analytics table`);
  const { key, time, events } = pruned;
  const stmt = storage.sqlite.prepare<{ n: number }, [string, number, number]>(
    `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE workspace_id = ?1 AND ${time} < ?2 LIMIT ?3) RETURNING ${events ?? 1} AS n`,
  );
  const workspaces = storage.sqlite.query<{ id: string }, []>(
    `WITH RECURSIVE w(id) AS (
       SELECT min(workspace_id) FROM ${table}
       UNION ALL SELECT (SELECT min(workspace_id) FROM ${table} WHERE workspace_id > w.id) FROM w WHERE w.id IS NOT NULL
     ) SELECT id FROM w WHERE id IS NOT NULL`,
  ).all();
  let total = 0;
  for (const { id } of workspaces) {
    for (;;) {
      const budget = pacer.budget();
      // Rows of several events: as many as the budget surely covers, and at least one.
      const limit = events ? Math.max(1, Math.floor(budget / MAX_CHUNK_EVENTS)) : budget;
      const rows = stmt.all(id, cutoffMs, limit);
      const deleted = rows.reduce((sum, r) => sum + r.n, 0);
      total += deleted;
      await pacer.spent(deleted);
      if (rows.length < limit) break;
    }
  }
  return total;
}

/**
 * Paces a prune: each delete may take what is left of `batchSize` rows, and once they are spent,
 * or YIELD_EVERY statements have run, it yields to the event loop. So at most a batch is deleted
 * between two yields, however the rows fall into workspaces and tables, and each statement (its
 * own transaction) holds the write lock for one batch at most.
 */
class Pacer {
  private rows = 0;
  private statements = 0;

  constructor(private readonly batchSize: number) {
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  }

  /** Rows the next delete may take: at least 1. */
  budget(): number {
    return this.batchSize - this.rows;
  }

  async spent(deleted: number): Promise<void> {
    this.rows += deleted;
    this.statements++;
    if (this.rows < this.batchSize && this.statements < YIELD_EVERY) return;
    this.rows = 0;
    this.statements = 0;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
