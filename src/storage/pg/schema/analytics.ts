/**
 * The analytics tables of the cluster mode, in a PostgreSQL schema of their own (`analytics`) so
 * that one grant confines the read-only role callers' queries run as (migration 0003) to them and
 * nothing else. The SQLite twins live in analytics.db (storage/schema/analytics.ts); these differ
 * by design where PostgreSQL serves better: one row per event (no batch rows read through a JSON
 * view), and every rollup granularity upserted with its events (no minute rows to fold later:
 * PostgreSQL's row locks let every node add to the same rows in one transaction).
 */
import { doublePrecision, index, pgSchema, primaryKey, text } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";

export const analyticsSchema = pgSchema("analytics");

/** One verification event a row, as the public raw table shows it. */
export const pgVerificationEvents = analyticsSchema.table("verification_events", {
  id: int8("id").primaryKey().generatedAlwaysAsIdentity(),
  requestId: text("request_id").notNull().default(""),
  time: int8("time").notNull(),
  workspaceId: text("workspace_id").notNull(),
  keySpaceId: text("key_space_id").notNull(),
  keyId: text("key_id").notNull(),
  identityId: text("identity_id").notNull().default(""),
  externalId: text("external_id").notNull().default(""),
  outcome: text("outcome").notNull(),
  tags: text("tags").notNull().default("[]"),
  spentCredits: int8("spent_credits").notNull().default(0),
  latencyMs: doublePrecision("latency_ms").notNull().default(0),
}, (t) => [
  // Every query is confined to a workspace and most read a recent time range; retention prunes by time.
  index("verification_events_workspace_time_idx").on(t.workspaceId, t.time),
  index("verification_events_time_idx").on(t.time),
]);

/** Verification counts per bucket (start in Unix ms, UTC), key, identity, outcome and tags; one table per granularity. */
function rollupTable<Name extends string>(name: Name) {
  return analyticsSchema.table(name, {
    time: int8("time").notNull(),
    workspaceId: text("workspace_id").notNull(),
    keySpaceId: text("key_space_id").notNull(),
    keyId: text("key_id").notNull(),
    identityId: text("identity_id").notNull().default(""),
    externalId: text("external_id").notNull().default(""),
    outcome: text("outcome").notNull(),
    tags: text("tags").notNull().default("[]"),
    count: int8("count").notNull(),
    spentCredits: int8("spent_credits").notNull().default(0),
    latencySumMs: doublePrecision("latency_sum_ms").notNull().default(0),
    latencyMaxMs: doublePrecision("latency_max_ms").notNull().default(0),
  }, (t) => [
    primaryKey({ name: `${name}_pk`, columns: [t.workspaceId, t.time, t.keySpaceId, t.keyId, t.identityId, t.outcome, t.tags] }),
    // The retention prune deletes by time across workspaces.
    index(`${name}_time_idx`).on(t.time),
  ]);
}

export const pgVerificationsPerMinute = rollupTable("verification_rollups_minute");
export const pgVerificationsPerHour = rollupTable("verification_rollups_hour");
export const pgVerificationsPerDay = rollupTable("verification_rollups_day");
export const pgVerificationsPerMonth = rollupTable("verification_rollups_month");

/** The rollups summed over keys, identities and tags: per bucket, key space and outcome. */
function totalsTable<Name extends string>(name: Name) {
  return analyticsSchema.table(name, {
    time: int8("time").notNull(),
    workspaceId: text("workspace_id").notNull(),
    keySpaceId: text("key_space_id").notNull(),
    outcome: text("outcome").notNull(),
    count: int8("count").notNull(),
    spentCredits: int8("spent_credits").notNull().default(0),
  }, (t) => [
    primaryKey({ name: `${name}_pk`, columns: [t.workspaceId, t.time, t.keySpaceId, t.outcome] }),
    index(`${name}_time_idx`).on(t.time),
  ]);
}

export const pgVerificationTotalsPerMinute = totalsTable("verification_totals_minute");
export const pgVerificationTotalsPerHour = totalsTable("verification_totals_hour");
export const pgVerificationTotalsPerDay = totalsTable("verification_totals_day");
export const pgVerificationTotalsPerMonth = totalsTable("verification_totals_month");

/** Rate-limit decisions per bucket and namespace, added to at every flush of a node's aggregates. */
function decisionsTable<Name extends string>(name: Name) {
  return analyticsSchema.table(name, {
    time: int8("time").notNull(),
    workspaceId: text("workspace_id").notNull(),
    namespaceId: text("namespace_id").notNull(),
    passed: int8("passed").notNull(),
    blocked: int8("blocked").notNull(),
  }, (t) => [
    primaryKey({ name: `${name}_pk`, columns: [t.workspaceId, t.time, t.namespaceId] }),
    index(`${name}_time_idx`).on(t.time),
  ]);
}

export const pgRatelimitDecisionsPerMinute = decisionsTable("ratelimit_decisions_minute");
export const pgRatelimitDecisionsPerHour = decisionsTable("ratelimit_decisions_hour");
export const pgRatelimitDecisionsPerDay = decisionsTable("ratelimit_decisions_day");
export const pgRatelimitDecisionsPerMonth = decisionsTable("ratelimit_decisions_month");

/** The read-only role callers' analytics queries run as (SET LOCAL ROLE): SELECT on this schema's tables only. */
export const ANALYTICS_READER_ROLE = "tollgate_analytics_reader";
