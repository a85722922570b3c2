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

/** A per-identifier limit that replaces the request's; `identifier` may contain `*` wildcards. */
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
]);

/**
 * Saved sliding-window counters, so limits survive a restart: one row per (counter, duration), the
 * limiter's state as of its last flush. `counter` names (workspace, namespace, identifier);
 * `expires_ms` = window start + 2 × duration, when neither count is weighed any more.
 */
export const ratelimitWindows = sqliteTable("ratelimit_windows", {
  counter: text("counter").notNull(),
  durationMs: integer("duration_ms").notNull(),
  windowStartMs: integer("window_start_ms").notNull(),
  count: integer("count").notNull(),
  previousCount: integer("previous_count").notNull().default(0),
  expiresMs: integer("expires_ms").notNull().default(0),
}, (t) => [primaryKey({ columns: [t.counter, t.durationMs] }), index("ratelimit_windows_expires_idx").on(t.expiresMs)]);
