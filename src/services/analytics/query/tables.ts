/**
 * The public analytics tables and how each maps onto a physical table. Only these names can appear
 * in a caller's FROM; each reference becomes a subquery over the physical table that exposes these
 * columns and nothing else, filtered to the caller's workspace (and key spaces).
 */

export interface PublicColumn {
  name: string;
  /** SQLite expression over the physical table; written here, never taken from a caller. */
  sql: string;
}

export interface PublicTable {
  name: string;
  physical: string;
  columns: readonly PublicColumn[];
}

const col = (name: string, sql = `\`${name}\``): PublicColumn => ({ name, sql });

/** Columns every table shares, in upstream's order. */
const IDENTITY_COLUMNS = [
  col("workspace_id"), col("key_space_id"), col("identity_id"), col("external_id"), col("key_id"),
];

const RAW_COLUMNS: readonly PublicColumn[] = [
  col("request_id"), col("time"), ...IDENTITY_COLUMNS,
  // One process, no edge network: upstream's region and source have a single value here.
  col("region", "'local'"), col("source", "'api'"),
  col("outcome"), col("tags"), col("spent_credits"), col("latency", "`latency_ms`"),
];

const ROLLUP_COLUMNS: readonly PublicColumn[] = [
  col("time"), ...IDENTITY_COLUMNS, col("source", "'api'"), col("outcome"), col("tags"),
  col("count"), col("spent_credits"),
  // Rollup rows always count at least one event, so the division is defined.
  col("latency_avg", "`latency_sum_ms` / `count`"),
];

export const PUBLIC_TABLES: ReadonlyMap<string, PublicTable> = new Map([
  ["key_verifications_v1", { name: "key_verifications_v1", physical: "verification_events", columns: RAW_COLUMNS }],
  ["key_verifications_per_minute_v1", { name: "key_verifications_per_minute_v1", physical: "verification_rollups_minute", columns: ROLLUP_COLUMNS }],
  ["key_verifications_per_hour_v1", { name: "key_verifications_per_hour_v1", physical: "verification_rollups_hour", columns: ROLLUP_COLUMNS }],
  ["key_verifications_per_day_v1", { name: "key_verifications_per_day_v1", physical: "verification_rollups_day", columns: ROLLUP_COLUMNS }],
  ["key_verifications_per_month_v1", { name: "key_verifications_per_month_v1", physical: "verification_rollups_month", columns: ROLLUP_COLUMNS }],
]);

/** Every public table has it; the watchdog (translate.ts) reads it to run in each join loop. */
export const ALWAYS_PRESENT_COLUMN = "time";
