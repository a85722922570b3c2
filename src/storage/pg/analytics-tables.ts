/**
 * The cluster mode's analytics tables by role and granularity, and their names as SQL (schema
 * `analytics`, quoted): what the event writer, the retention prune and the copy from a single box
 * write their statements against, read from the drizzle schema rather than spelled again.
 */
import { getTableName } from "drizzle-orm";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import {
  pgRatelimitDecisionsPerDay, pgRatelimitDecisionsPerHour, pgRatelimitDecisionsPerMinute, pgRatelimitDecisionsPerMonth,
  pgVerificationEvents, pgVerificationsPerDay, pgVerificationsPerHour, pgVerificationsPerMinute, pgVerificationsPerMonth,
  pgVerificationTotalsPerDay, pgVerificationTotalsPerHour, pgVerificationTotalsPerMinute, pgVerificationTotalsPerMonth,
} from "./schema/analytics.ts";
import { quoteIdentifier } from "./db.ts";

/** The granularities of the rollups, totals and decisions (the services' `Granularity`). */
export type PgGranularity = "minute" | "hour" | "day" | "month";

export const GRANULARITIES: readonly PgGranularity[] = ["minute", "hour", "day", "month"];

export const PG_ANALYTICS = {
  events: pgVerificationEvents,
  rollups: { minute: pgVerificationsPerMinute, hour: pgVerificationsPerHour, day: pgVerificationsPerDay, month: pgVerificationsPerMonth },
  totals: { minute: pgVerificationTotalsPerMinute, hour: pgVerificationTotalsPerHour, day: pgVerificationTotalsPerDay, month: pgVerificationTotalsPerMonth },
  decisions: { minute: pgRatelimitDecisionsPerMinute, hour: pgRatelimitDecisionsPerHour, day: pgRatelimitDecisionsPerDay, month: pgRatelimitDecisionsPerMonth },
} as const satisfies { events: PgTable; rollups: Record<PgGranularity, PgTable>; totals: Record<PgGranularity, PgTable>; decisions: Record<PgGranularity, PgTable> };

/** `"schema"."table"`, or `"table"` for a table of the default schema. */
export function qualifiedName(table: PgTable): string {
  const schema = getTableConfig(table).schema;
  const name = quoteIdentifier(getTableName(table));
  return schema === undefined ? name : `${quoteIdentifier(schema)}.${name}`;
}

/** The primary key's columns, quoted and comma-separated: an upsert's conflict target. */
export function primaryKeySql(table: PgTable): string {
  return getTableConfig(table).primaryKeys[0]!.columns.map((c) => quoteIdentifier(c.name)).join(", ");
}
