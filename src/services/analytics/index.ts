/**
 * Analytics: every verification of a found key becomes an event (outcome = its code, key, key
 * space, identity, external id, spent credits, tags, latency), buffered in memory and written in
 * batches, off the main thread when served, each with its per-minute rollup (per key) and its
 * per-minute, -hour, -day and -month totals (per key space) in the same transaction; the hour, day
 * and month rollups are folded from the minute rows (fold.ts), and the tables the queries read add
 * the rows not folded yet, so rollup and total counts always equal the raw events written. Each
 * table has its own retention, pruned daily. In the cluster mode every node writes to PostgreSQL
 * instead (pg-writer.ts: every granularity upserted with its events, no fold).
 */
export { VerificationEventSink, DEFAULT_MAX_BUFFERED, DEFAULT_HAND_OVER_AT } from "./events.ts";
export type { VerificationEvent, VerificationRecorder } from "./types.ts";
export { SqliteEventWriter, WorkerEventWriter, EventWriteError, type EventBatchWriter } from "./writers.ts";
export { RatelimitDecisionAggregator, DEFAULT_MAX_PENDING_DECISION_ROWS, type DecisionRow, type DecisionRowWriter } from "./ratelimit-decisions.ts";
export { aggregate, totalsOf, bucketStartMs, GRANULARITIES, ROLLUP_TABLES, TOTALS_TABLES, type Granularity, type RollupRow, type TotalRow } from "./rollups.ts";
export { pruneAnalytics, retentionCutoffs, type AnalyticsRetention, type PruneCounts, type RetentionCutoffs } from "./retention.ts";
// The cluster mode: events and decisions written to PostgreSQL by every node, pruned once per cluster.
export { PgEventWriter } from "./pg-writer.ts";
export { prunePgAnalytics } from "./pg-retention.ts";
// analytics.getVerifications: callers' SQL, checked and confined, run on a read-only connection in a query process.
export { AnalyticsQueryService, type AnalyticsQueryRunner } from "./query-service.ts";
// Verification counts by API and outcome since a time, from the totals tables (`tollgate stats`).
export { VerificationTotals, type VerificationTotalsReader, type VerificationSummary, type ApiVerificationCounts } from "./totals.ts";
export { PgVerificationTotals } from "./pg-totals.ts";
export { AnalyticsProcessPool, type ProcessPoolOptions, type QueryRequest } from "./process-pool.ts";
export { serveAnalyticsQueries, type ParentChannel } from "./query-process.ts";
export { MAX_ANALYTICS_ROWS, MAX_RESULT_BYTES, type Row as AnalyticsRow } from "./execute.ts";
