/**
 * Retention of the cluster's analytics tables in PostgreSQL: the same settings and cutoffs as the
 * embedded mode's (retention.ts `retentionCutoffs`: raw events by their time, each granularity's
 * rollups, totals and rate-limit decisions once their whole bucket is past retention). There is
 * no fold to finish first: every granularity is written with its events (pg-writer.ts).
 *
 * Rows go in batches by time, each DELETE its own short transaction (the rows found through the
 * table's time index, deleted by their physical address), so a prune of months of rows never holds
 * one long transaction, its locks and its dead rows, while the nodes keep writing. The job runs
 * once per cluster (a leased job, jobs/leased.ts).
 */
import type { SQL } from "bun";
import { PG_ANALYTICS, qualifiedName } from "../../storage/pg/analytics-tables.ts";
import { retentionCutoffs, type AnalyticsRetention, type PruneCounts } from "./retention.ts";
import { GRANULARITIES } from "./rollups.ts";
import type { PgTable } from "drizzle-orm/pg-core";

/** Rows per DELETE. */
export const PG_PRUNE_BATCH_ROWS = 10_000;

/** Deletes, from every analytics table in PostgreSQL, the rows older than its retention at `nowMs`; returns how many per table. */
export async function prunePgAnalytics(sql: SQL, retention: AnalyticsRetention, nowMs: number, batchRows = PG_PRUNE_BATCH_ROWS): Promise<PruneCounts> {
  if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`batchRows must be a positive integer, got ${batchRows}`);
  const cutoffs = retentionCutoffs(retention, nowMs);
  const counts: PruneCounts = {
    raw: 0, minute: 0, hour: 0, day: 0, month: 0, totals: { minute: 0, hour: 0, day: 0, month: 0 }, ratelimits: { minute: 0, hour: 0, day: 0, month: 0 },
  };
  counts.raw = await pruneTable(sql, PG_ANALYTICS.events, cutoffs.raw, batchRows);
  for (const g of GRANULARITIES) {
    counts[g] = await pruneTable(sql, PG_ANALYTICS.rollups[g], cutoffs[g], batchRows);
    counts.totals[g] = await pruneTable(sql, PG_ANALYTICS.totals[g], cutoffs[g], batchRows);
    counts.ratelimits[g] = await pruneTable(sql, PG_ANALYTICS.decisions[g], cutoffs[g], batchRows);
  }
  return counts;
}

/** Deletes the rows of `table` whose `time` is before `cutoffMs`, `batchRows` a statement; returns how many. */
async function pruneTable(sql: SQL, table: PgTable, cutoffMs: number, batchRows: number): Promise<number> {
  const name = qualifiedName(table);
  const statement = `DELETE FROM ${name} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${name} WHERE "time" < $1 LIMIT $2))`;
  let total = 0;
  for (;;) {
    const result = await sql.unsafe(statement, [cutoffMs, batchRows]);
    // Bun's client answers a statement without rows with the number it changed as `count`.
    const deleted = (result as unknown as { count: number }).count;
    total += deleted;
    if (deleted < batchRows) return total;
  }
}
