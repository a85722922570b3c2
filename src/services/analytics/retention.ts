/**
 * Retention of the analytics tables: each keeps its rows for its own number of days. A rollup row
 * goes only once its whole bucket is past retention, so the bucket that holds the cutoff keeps
 * counting every event it had. Rows are deleted in small batches with a yield between them, so a
 * large prune never holds the write lock, or the event loop, long enough to delay a verification.
 */
import type { Storage } from "../../storage/db.ts";
import { getTableName } from "drizzle-orm";
import { verificationEvents } from "../../storage/schema/index.ts";
import { bucketStartMs, GRANULARITIES, ROLLUP_TABLES, type Granularity } from "./rollups.ts";

/** Days each table keeps its rows. */
export interface AnalyticsRetention {
  raw: number;
  minute: number;
  hour: number;
  day: number;
  month: number;
}

export type PruneCounts = Record<keyof AnalyticsRetention, number>;

const DAY_MS = 86_400_000;
const DEFAULT_BATCH = 5_000;

const RAW_TABLE = getTableName(verificationEvents);

/** Deletes, from every analytics table, the rows older than its retention at `nowMs`; returns how many per table. */
export async function pruneAnalytics(
  storage: Storage, retention: AnalyticsRetention, nowMs: number, batchSize = DEFAULT_BATCH,
): Promise<PruneCounts> {
  const tables: Array<[keyof AnalyticsRetention, string]> = [
    ["raw", RAW_TABLE],
    ...GRANULARITIES.map((g: Granularity) => [g, ROLLUP_TABLES[g]] as [Granularity, string]),
  ];
  const counts: PruneCounts = { raw: 0, minute: 0, hour: 0, day: 0, month: 0 };
  for (const [name, table] of tables) {
    const stmt = storage.sqlite.prepare<unknown, [number, number]>(
      `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE time < ?1 LIMIT ?2)`,
    );
    const oldestKeptMs = nowMs - retention[name] * DAY_MS;
    const cutoffMs = name === "raw" ? oldestKeptMs : bucketStartMs(name, oldestKeptMs);
    for (;;) {
      const deleted = stmt.run(cutoffMs, batchSize).changes;
      counts[name] += deleted;
      if (deleted < batchSize) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return counts;
}
