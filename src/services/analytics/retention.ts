/**
 * Retention of the analytics tables: each keeps its rows for its own number of days. A rollup row
 * goes only once its whole bucket is past retention, so the bucket that holds the cutoff keeps
 * counting every event it had. Rows are deleted in small batches with a yield between them, so a
 * large prune never holds the write lock, or the event loop, long enough to delay a verification.
 */
import type { Storage } from "../../storage/db.ts";
import { getTableName } from "drizzle-orm";
import { verificationEvents } from "../../storage/schema/index.ts";
import { bucketStartMs, GRANULARITIES, ROLLUP_TABLES, TOTALS_TABLES, type Granularity } from "./rollups.ts";

/** Days each table keeps its rows. */
export interface AnalyticsRetention {
  raw: number;
  minute: number;
  hour: number;
  day: number;
  month: number;
}

/** Rows deleted from the raw table and each rollup, and (`totals`) from each totals table. */
export type PruneCounts = Record<keyof AnalyticsRetention, number> & { totals: Record<Granularity, number> };

const DAY_MS = 86_400_000;
/** About 2 ms of deleting on a table of millions of rollup rows (5,000 took 10 to 17 ms): the longest the prune holds the event loop at once. */
const DEFAULT_BATCH = 1_000;

const RAW_TABLE = getTableName(verificationEvents);

/** Deletes, from every analytics table, the rows older than its retention at `nowMs`; returns how many per table. */
export async function pruneAnalytics(
  storage: Storage, retention: AnalyticsRetention, nowMs: number, batchSize = DEFAULT_BATCH,
): Promise<PruneCounts> {
  const counts: PruneCounts = { raw: 0, minute: 0, hour: 0, day: 0, month: 0, totals: { minute: 0, hour: 0, day: 0, month: 0 } };
  counts.raw = await pruneRawEvents(storage, nowMs - retention.raw * DAY_MS, batchSize);
  for (const g of GRANULARITIES) {
    // A bucket goes only once all of it is past retention.
    const cutoffMs = bucketStartMs(g, nowMs - retention[g] * DAY_MS);
    counts[g] = await pruneTable(storage, ROLLUP_TABLES[g], cutoffMs, batchSize);
    counts.totals[g] = await pruneTable(storage, TOTALS_TABLES[g], cutoffMs, batchSize);
  }
  return counts;
}

/** Deletes the rows of `table` older than `cutoffMs`, `batchSize` at a time; returns how many. */
async function pruneTable(storage: Storage, table: string, cutoffMs: number, batchSize: number): Promise<number> {
  const stmt = storage.sqlite.prepare<unknown, [number, number]>(
    `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE time < ?1 LIMIT ?2)`,
  );
  return deleteInBatches(() => stmt.run(cutoffMs, batchSize).changes, batchSize);
}

/**
 * The raw events are indexed by workspace and time only (each written event pays for every
 * index), so they are pruned one workspace at a time. The workspaces are found by seeking the
 * index from one to the next, not by reading it whole.
 */
async function pruneRawEvents(storage: Storage, cutoffMs: number, batchSize: number): Promise<number> {
  const workspaces = storage.sqlite.query<{ id: string }, []>(
    `WITH RECURSIVE w(id) AS (
       SELECT min(workspace_id) FROM ${RAW_TABLE}
       UNION ALL SELECT (SELECT min(workspace_id) FROM ${RAW_TABLE} WHERE workspace_id > w.id) FROM w WHERE w.id IS NOT NULL
     ) SELECT id FROM w WHERE id IS NOT NULL`,
  ).all();
  const stmt = storage.sqlite.prepare<unknown, [string, number, number]>(
    `DELETE FROM ${RAW_TABLE} WHERE rowid IN (SELECT rowid FROM ${RAW_TABLE} WHERE workspace_id = ?1 AND time < ?2 LIMIT ?3)`,
  );
  let total = 0;
  for (const { id } of workspaces) total += await deleteInBatches(() => stmt.run(id, cutoffMs, batchSize).changes, batchSize);
  return total;
}

/** Runs `deleteBatch` until it deletes fewer than `batchSize` rows, yielding between batches; returns the rows deleted. */
async function deleteInBatches(deleteBatch: () => number, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = deleteBatch();
    total += deleted;
    if (deleted < batchSize) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
