import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One change made through the API or the CLI; written in the same transaction as the change. */
export const auditLogs = sqliteTable("audit_logs", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull(),
  time: integer("time").notNull(),
  event: text("event").notNull(),
  actorType: text("actor_type").notNull(),
  actorId: text("actor_id").notNull(),
  actorName: text("actor_name"),
  /** JSON array of `{type, id, name?}`. */
  resources: text("resources", { mode: "json" }).$type<Array<{ type: string; id: string; name?: string }>>().notNull(),
  description: text("description").notNull(),
  remoteIp: text("remote_ip"),
  userAgent: text("user_agent"),
}, (t) => [index("audit_logs_workspace_time_idx").on(t.workspaceId, t.time)]);

/** One key verification, for analytics. */
export const verificationEvents = sqliteTable("verification_events", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  requestId: text("request_id").notNull(),
  time: integer("time").notNull(),
  workspaceId: text("workspace_id").notNull(),
  keySpaceId: text("key_space_id").notNull(),
  keyId: text("key_id").notNull(),
  /** '' when the key has no identity, so rollups group it like any other value. */
  identityId: text("identity_id").notNull().default(""),
  externalId: text("external_id").notNull().default(""),
  outcome: text("outcome").notNull(),
  /** JSON array of strings, sorted, so equal tag sets group together. */
  tags: text("tags").notNull().default("[]"),
  spentCredits: integer("spent_credits").notNull().default(0),
  latencyMs: real("latency_ms").notNull().default(0),
}, (t) => [
  // The only index: every query is confined to a workspace, and retention prunes workspace by
  // workspace, so a second index on time alone would only make each written event dearer.
  index("verification_events_workspace_time_idx").on(t.workspaceId, t.time),
]);

/**
 * Verification counts per time bucket, one table per granularity, kept up to date as events are
 * written. `time` is the bucket start in Unix ms (UTC); a row counts the events of one bucket with
 * the same key, identity, outcome and tags.
 *
 * These tables, and the totals below, are WITHOUT ROWID by migration 0006 (drizzle cannot declare
 * it): each is one B-tree clustered on its primary key, with no other index. With many active keys
 * nearly every upsert lands on a new row at a random place, and each extra B-tree (a rowid table
 * plus its key index, a time index) was another random page to write. Every query and the
 * retention prune go by workspace and time, along the primary key.
 */
function rollupTable(name: string) {
  return sqliteTable(name, {
    time: integer("time").notNull(),
    workspaceId: text("workspace_id").notNull(),
    keySpaceId: text("key_space_id").notNull(),
    keyId: text("key_id").notNull(),
    identityId: text("identity_id").notNull().default(""),
    externalId: text("external_id").notNull().default(""),
    outcome: text("outcome").notNull(),
    tags: text("tags").notNull().default("[]"),
    count: integer("count").notNull(),
    spentCredits: integer("spent_credits").notNull().default(0),
    latencySumMs: real("latency_sum_ms").notNull().default(0),
    latencyMaxMs: real("latency_max_ms").notNull().default(0),
  }, (t) => [
    primaryKey({ columns: [t.workspaceId, t.time, t.keySpaceId, t.keyId, t.identityId, t.outcome, t.tags] }),
  ]);
}

export const verificationsPerMinute = rollupTable("verification_rollups_minute");
export const verificationsPerHour = rollupTable("verification_rollups_hour");
export const verificationsPerDay = rollupTable("verification_rollups_day");
export const verificationsPerMonth = rollupTable("verification_rollups_month");

/**
 * Verification totals per time bucket, key space and outcome: the rollups above summed over keys,
 * identities and tags, kept up to date in the same transaction. A query that needs nothing finer
 * (a workspace's or an API's counts over time) reads these few rows instead of one per key.
 * WITHOUT ROWID by migration 0006, like the rollups.
 */
function totalsTable(name: string) {
  return sqliteTable(name, {
    time: integer("time").notNull(),
    workspaceId: text("workspace_id").notNull(),
    keySpaceId: text("key_space_id").notNull(),
    outcome: text("outcome").notNull(),
    count: integer("count").notNull(),
    spentCredits: integer("spent_credits").notNull().default(0),
  }, (t) => [
    primaryKey({ columns: [t.workspaceId, t.time, t.keySpaceId, t.outcome] }),
  ]);
}

export const verificationTotalsPerMinute = totalsTable("verification_totals_minute");
export const verificationTotalsPerHour = totalsTable("verification_totals_hour");
export const verificationTotalsPerDay = totalsTable("verification_totals_day");
export const verificationTotalsPerMonth = totalsTable("verification_totals_month");
