/**
 * The public analytics tables and how each maps onto a physical table. Only these names can appear
 * in a caller's FROM; each reference becomes a subquery over the physical table that exposes these
 * columns and nothing else, filtered to the caller's workspace (and key spaces, or namespaces).
 * The `ratelimits_*` tables are a tollgate addition (upstream keeps rate-limit analytics elsewhere).
 * The physical tables are analytics.db's (SQLite) or schema `analytics`'s (PostgreSQL, the cluster
 * mode): the same names and columns, except that PostgreSQL keeps one row per event (no batches)
 * and upserts every rollup granularity with its events (no views adding unfolded minute rows).
 */
import type { DialectName } from "./dialect.ts";

/**
 * What a table's rows are about, which says the permission that reads them and the column that
 * confines them: key verifications (`api.*.read_analytics`, by key space) or rate-limit decisions
 * (`ratelimit.*.read_analytics`, by namespace).
 */
export type TableFamily = "verifications" | "ratelimits";

export interface PublicColumn {
  name: string;
  /** The expression over the physical table, its columns quoted by `quote`; written here, never taken from a caller. */
  sql(quote: (name: string) => string): string;
}

export interface PublicTable {
  name: string;
  family: TableFamily;
  /** The physical table (or view) in each dialect's database. */
  physical: Readonly<Record<DialectName, string>>;
  columns: readonly PublicColumn[];
  /**
   * For a table stored in batches (analytics.db's raw events): the physical columns that bound the
   * `time` of every row in a row's batch, so that the translator can confine a query's time range
   * to the batches that hold it.
   */
  batchBounds?: { min: string; max: string };
  /** A rollup's totals per bucket, key space and outcome, for the queries totals.ts allows. */
  totals?: { physical: Readonly<Record<DialectName, string>>; columns: readonly PublicColumn[] };
}

const col = (name: string, sql = (quote: (name: string) => string) => quote(name)): PublicColumn => ({ name, sql });
/** A constant, the same in every dialect. */
const constant = (name: string, sql: string): PublicColumn => ({ name, sql: () => sql });
const both = (name: string) => ({ sqlite: name, postgres: name });

/** Columns every table shares, in upstream's order. */
const IDENTITY_COLUMNS = [
  col("workspace_id"), col("key_space_id"), col("identity_id"), col("external_id"), col("key_id"),
];

const RAW_COLUMNS: readonly PublicColumn[] = [
  col("request_id"), col("time"), ...IDENTITY_COLUMNS,
  // One process, no edge network: upstream's region and source have a single value here.
  constant("region", "'local'"), constant("source", "'api'"),
  col("outcome"), col("tags"), col("spent_credits"), col("latency", (q) => q("latency_ms")),
];

const ROLLUP_COLUMNS: readonly PublicColumn[] = [
  col("time"), ...IDENTITY_COLUMNS, constant("source", "'api'"), col("outcome"), col("tags"),
  col("count"), col("spent_credits"),
  // Rollup rows always count at least one event, so the division is defined.
  col("latency_avg", (q) => `${q("latency_sum_ms")} / ${q("count")}`),
];

const TOTALS_COLUMNS: readonly PublicColumn[] = [
  col("time"), col("workspace_id"), col("key_space_id"), constant("source", "'api'"), col("outcome"), col("count"), col("spent_credits"),
];

/**
 * In analytics.db the minute rollup is a table; the coarser ones are views adding the minute rows
 * not folded into them yet (migration 0008). In PostgreSQL every granularity is a table.
 */
const rollup = (name: string, granularity: string): [string, PublicTable] => [name, {
  name, family: "verifications", columns: ROLLUP_COLUMNS,
  physical: { sqlite: granularity === "minute" ? "verification_rollups_minute" : `verification_rollups_${granularity}_all`, postgres: `verification_rollups_${granularity}` },
  totals: { physical: both(`verification_totals_${granularity}`), columns: TOTALS_COLUMNS },
}];

const DECISION_COLUMNS: readonly PublicColumn[] = [
  col("time"), col("workspace_id"), col("namespace_id"), col("passed"), col("blocked"), col("total", (q) => `${q("passed")} + ${q("blocked")}`),
];

/** Rate-limit decisions per bucket and namespace: a table per granularity, each written at every flush. */
const decisions = (name: string, granularity: string): [string, PublicTable] => [name, {
  name, family: "ratelimits", physical: both(`ratelimit_decisions_${granularity}`), columns: DECISION_COLUMNS,
}];

export const PUBLIC_TABLES: ReadonlyMap<string, PublicTable> = new Map([
  // analytics.db's view over verification_event_batches (migration 0007), PostgreSQL's table: an event a row.
  ["key_verifications_v1", {
    name: "key_verifications_v1", family: "verifications", physical: both("verification_events"), columns: RAW_COLUMNS,
    batchBounds: { min: "batch_min_time", max: "batch_max_time" },
  }],
  rollup("key_verifications_per_minute_v1", "minute"),
  rollup("key_verifications_per_hour_v1", "hour"),
  rollup("key_verifications_per_day_v1", "day"),
  rollup("key_verifications_per_month_v1", "month"),
  decisions("ratelimits_per_minute_v1", "minute"),
  decisions("ratelimits_per_hour_v1", "hour"),
  decisions("ratelimits_per_day_v1", "day"),
  decisions("ratelimits_per_month_v1", "month"),
]);

/** Every public table has it; the watchdog (translate.ts) reads it to run in each join loop. */
export const ALWAYS_PRESENT_COLUMN = "time";
