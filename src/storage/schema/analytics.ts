/**
 * The analytics tables: verification events and their rollups and totals. They live in a database
 * file of their own, `analytics.db` beside `tollgate.db`, with their own migrations
 * (migrations/analytics/, drizzle.analytics.config.ts): the event writer's commits and the
 * checkpoints of their WAL then never hold the write lock that credit spends, key changes and
 * audit entries take in `tollgate.db` (see src/storage/data-dir.ts).
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Verifications of one workspace, for analytics, as one row per written chunk rather than one per
 * event: a row costs the event writer about as much as a single event row did, so an event costs
 * far less than as a row of its own (a row and its index entry each). `events` is a JSON
 * array with an array per event, laid out as `layout` says (src/services/analytics/raw-events.ts):
 * 1 for the rows written before analytics.db's migration 0001, every field of every event; 2 since,
 * one key space a row (`key_space_id`), times from `min_time` on and fields at their default left
 * off, about half the bytes. `min_time` and `max_time` bound the events' times, so a query with a
 * time range, and the retention prune, read only the rows that can hold its events. The view
 * `verification_events` (that migration) shows both layouts one row per event.
 */
export const verificationEventBatches = sqliteTable("verification_event_batches", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  workspaceId: text("workspace_id").notNull(),
  minTime: integer("min_time").notNull(),
  maxTime: integer("max_time").notNull(),
  eventCount: integer("event_count").notNull(),
  events: text("events").notNull(),
  layout: integer("layout").notNull().default(1),
  /** The events' key space in layout 2; '' in layout 1, where each event names its own. */
  keySpaceId: text("key_space_id").notNull().default(""),
}, (t) => [
  // Every query is confined to a workspace and most read the recent past; retention prunes by
  // workspace too. `max_time`: a range's lower bound finds the first row that can reach it. The
  // layout and key space: a query skips the rows of the other layout's arm of the view, and of key
  // spaces it may not read, in the index; they are stored after `events`, so reading them from the
  // row would read all of it.
  index("verification_event_batches_workspace_time_idx").on(t.workspaceId, t.maxTime, t.layout, t.keySpaceId),
]);

/**
 * Verification counts per time bucket, one table per granularity: the minute rows written with the
 * events, the hour, day and month rows folded from them (below). `time` is the bucket start in Unix
 * ms (UTC); a row counts the events of one bucket with the same key, identity, outcome and tags.
 *
 * These tables, and the totals below, are WITHOUT ROWID by migration 0006 (drizzle cannot declare
 * it): each is one B-tree clustered on its primary key, with no other index (but the minute
 * table's index of the rows still to fold). With many active keys nearly every upsert lands on a
 * new row at a random place, and each extra B-tree (a rowid table plus its key index, a time index)
 * was another random page to write. Every query and the retention prune go by workspace and time,
 * along the primary key.
 */
function rollupTable<Name extends string>(name: Name) {
  return sqliteTable(name, rollupColumns(), (t) => [
    primaryKey({ columns: [t.workspaceId, t.time, t.keySpaceId, t.keyId, t.identityId, t.outcome, t.tags] }),
  ]);
}

function rollupColumns() {
  return {
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
  };
}

/**
 * The minute rollup, written as events are; the hour, day and month rollups are folded from its
 * rows (src/services/analytics/fold.ts). `folded` is 1 once a row's counts are in the coarser
 * rollups: new rows are written with 0, and a later update of a folded row passes its difference
 * on to them (a trigger, migration 0008). Rows written before folding existed are folded (1).
 * The partial index finds the rows still to fold, for the fold and for the public coarser tables,
 * which add them (the `*_all` views, migration 0008).
 */
/** The minute rollup's partial index of the rows still to fold (the fold and the `*_all` views name it). */
export const MINUTE_UNFOLDED_INDEX = "verification_rollups_minute_unfolded_idx";

export const verificationsPerMinute = sqliteTable("verification_rollups_minute", {
  ...rollupColumns(),
  folded: integer("folded").notNull().default(1),
}, (t) => [
  primaryKey({ columns: [t.workspaceId, t.time, t.keySpaceId, t.keyId, t.identityId, t.outcome, t.tags] }),
  index(MINUTE_UNFOLDED_INDEX).on(t.workspaceId, t.time).where(sql`${t.folded} = 0`),
]);
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

/**
 * Rate-limit decisions (ratelimit.limit / multiLimit) counted per UTC bucket and namespace, one
 * table per granularity, each upserted (added to) when the aggregates held in memory are flushed
 * (src/services/analytics/ratelimit-decisions.ts). Per identifier nothing is kept: a caller picks
 * identifiers freely, so rows per identifier would have no bound. The key begins with workspace_id
 * and time, as the rollups' does, for the queries and the retention prune; WITHOUT ROWID by
 * migration 0002, like them.
 */
function decisionsTable(name: string) {
  return sqliteTable(name, {
    time: integer("time").notNull(),
    workspaceId: text("workspace_id").notNull(),
    namespaceId: text("namespace_id").notNull(),
    passed: integer("passed").notNull(),
    blocked: integer("blocked").notNull(),
  }, (t) => [
    primaryKey({ columns: [t.workspaceId, t.time, t.namespaceId] }),
  ]);
}

export const ratelimitDecisionsPerMinute = decisionsTable("ratelimit_decisions_minute");
export const ratelimitDecisionsPerHour = decisionsTable("ratelimit_decisions_hour");
export const ratelimitDecisionsPerDay = decisionsTable("ratelimit_decisions_day");
export const ratelimitDecisionsPerMonth = decisionsTable("ratelimit_decisions_month");

/** Every analytics table, as analytics.db holds them. */
export const ANALYTICS_TABLES = [
  verificationEventBatches,
  verificationsPerMinute, verificationsPerHour, verificationsPerDay, verificationsPerMonth,
  verificationTotalsPerMinute, verificationTotalsPerHour, verificationTotalsPerDay, verificationTotalsPerMonth,
] as const;
