import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { identities, keys } from "./keys.ts";
import { workspaces } from "./workspaces.ts";

/** A named limit configured on a key or on an identity (exactly one of the two is set). */
export const ratelimitConfigs = sqliteTable("ratelimit_configs", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  keyId: text("key_id").references(() => keys.id, { onDelete: "cascade" }),
  identityId: text("identity_id").references(() => identities.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  limit: integer("limit").notNull(),
  durationMs: integer("duration_ms").notNull(),
  autoApply: integer("auto_apply", { mode: "boolean" }).notNull().default(false),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at"),
}, (t) => [
  uniqueIndex("ratelimit_configs_key_name_uq").on(t.keyId, t.name).where(sql`${t.keyId} is not null`),
  uniqueIndex("ratelimit_configs_identity_name_uq").on(t.identityId, t.name).where(sql`${t.identityId} is not null`),
]);

/** A group of standalone rate-limit checks and their overrides. Soft-deleted. */
export const ratelimitNamespaces = sqliteTable("ratelimit_namespaces", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  name: text("name").notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at"),
  deletedAt: integer("deleted_at"),
}, (t) => [uniqueIndex("ratelimit_namespaces_name_uq").on(t.workspaceId, t.name)]);

/**
 * A per-identifier limit that replaces the request's; `identifier` may contain `*` wildcards. The
 * wildcard index lets a namespace with more overrides than memory holds load its wildcards alone.
 */
export const ratelimitOverrides = sqliteTable("ratelimit_overrides", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  namespaceId: text("namespace_id").notNull().references(() => ratelimitNamespaces.id),
  identifier: text("identifier").notNull(),
  limit: integer("limit").notNull(),
  durationMs: integer("duration_ms").notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at"),
  deletedAt: integer("deleted_at"),
}, (t) => [
  uniqueIndex("ratelimit_overrides_live_uq").on(t.namespaceId, t.identifier).where(sql`${t.deletedAt} is null`),
  index("ratelimit_overrides_live_wildcard_idx").on(t.namespaceId).where(sql`${t.deletedAt} is null and instr(${t.identifier}, '*') > 0`),
]);

/**
 * The first storage format of the windows, one row per counter, upserted on every flush: random
 * B-tree writes that cost tens of ms per flush at scale. Superseded by `ratelimit_log`; rows left
 * by an older version are read once at start, written to the log, and deleted.
 */
export const ratelimitWindows = sqliteTable("ratelimit_windows", {
  counter: text("counter").notNull(),
  durationMs: integer("duration_ms").notNull(),
  windowStartMs: integer("window_start_ms").notNull(),
  count: integer("count").notNull(),
  previousCount: integer("previous_count").notNull().default(0),
  expiresMs: integer("expires_ms").notNull().default(0),
}, (t) => [primaryKey({ columns: [t.counter, t.durationMs] }), index("ratelimit_windows_expires_idx").on(t.expiresMs)]);

/**
 * Saved sliding-window counters as an append-only log, so limits survive a restart: each flush
 * appends the windows changed since the previous one, in chunks (services/ratelimit/window-log.ts);
 * a restore replays the chunks in `seq` order, a later window of a counter replacing an earlier one.
 * Compaction appends a snapshot of the live windows and deletes the chunks before it. Appends
 * touch only the end of the table, a few sequential pages per flush.
 */
export const ratelimitLog = sqliteTable("ratelimit_log", {
  seq: integer("seq").primaryKey(),
  /** Windows in this chunk. */
  windows: integer("windows").notNull(),
  /** When the last of its windows stops weighing anything; a restore skips older chunks unread. */
  expiresMs: integer("expires_ms").notNull(),
  data: text("data").notNull(),
});
