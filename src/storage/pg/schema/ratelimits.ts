/**
 * PostgreSQL twin of storage/schema/ratelimits.ts: configured limits, namespaces, overrides and the
 * saved windows. Limits and counts are int8: the API accepts limits up to 2^53 - 1.
 */
import { sql } from "drizzle-orm";
import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";
import { identities, keys } from "./keys.ts";
import { workspaces } from "./workspaces.ts";

/** A named limit configured on a key or on an identity (exactly one of the two is set). */
export const ratelimitConfigs = pgTable("ratelimit_configs", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  keyId: text("key_id").references(() => keys.id, { onDelete: "cascade" }),
  identityId: text("identity_id").references(() => identities.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  limit: int8("limit").notNull(),
  durationMs: int8("duration_ms").notNull(),
  autoApply: boolean("auto_apply").notNull().default(false),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
}, (t) => [
  uniqueIndex("ratelimit_configs_key_name_uq").on(t.keyId, t.name).where(sql`${t.keyId} is not null`),
  uniqueIndex("ratelimit_configs_identity_name_uq").on(t.identityId, t.name).where(sql`${t.identityId} is not null`),
]);

/** A group of standalone rate-limit checks and their overrides. Soft-deleted. */
export const ratelimitNamespaces = pgTable("ratelimit_namespaces", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  name: text("name").notNull(),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
  deletedAt: int8("deleted_at"),
}, (t) => [uniqueIndex("ratelimit_namespaces_name_uq").on(t.workspaceId, t.name)]);

/**
 * A per-identifier limit that replaces the request's; `identifier` may contain `*` wildcards. The
 * wildcard index is SQLite's with `strpos` for `instr` (same arguments, same 1-based result): a
 * query must spell its condition the same way for PostgreSQL to use the index.
 */
export const ratelimitOverrides = pgTable("ratelimit_overrides", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  namespaceId: text("namespace_id").notNull().references(() => ratelimitNamespaces.id),
  identifier: text("identifier").notNull(),
  limit: int8("limit").notNull(),
  durationMs: int8("duration_ms").notNull(),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
  deletedAt: int8("deleted_at"),
}, (t) => [
  uniqueIndex("ratelimit_overrides_live_uq").on(t.namespaceId, t.identifier).where(sql`${t.deletedAt} is null`),
  index("ratelimit_overrides_live_wildcard_idx").on(t.namespaceId).where(sql`${t.deletedAt} is null and strpos(${t.identifier}, '*') > 0`),
]);

/** The first storage format of the windows, superseded by `ratelimit_log` (see the SQLite schema). */
export const ratelimitWindows = pgTable("ratelimit_windows", {
  counter: text("counter").notNull(),
  durationMs: int8("duration_ms").notNull(),
  windowStartMs: int8("window_start_ms").notNull(),
  count: int8("count").notNull(),
  previousCount: int8("previous_count").notNull().default(0),
  expiresMs: int8("expires_ms").notNull().default(0),
}, (t) => [primaryKey({ columns: [t.counter, t.durationMs] }), index("ratelimit_windows_expires_idx").on(t.expiresMs)]);

/**
 * Saved sliding-window counters as an append-only log of chunks (see the SQLite schema). `seq` is
 * an identity where SQLite's is the rowid alias: an insert without it gets the next number.
 */
export const ratelimitLog = pgTable("ratelimit_log", {
  seq: int8("seq").primaryKey().generatedByDefaultAsIdentity(),
  /** Windows in this chunk. */
  windows: integer("windows").notNull(),
  /** When the last of its windows stops weighing anything; a restore skips older chunks unread. */
  expiresMs: int8("expires_ms").notNull(),
  data: text("data").notNull(),
});
