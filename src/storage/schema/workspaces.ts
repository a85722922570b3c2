import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** A tenant. Every other record belongs to exactly one workspace. */
export const workspaces = sqliteTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  analyticsEnabled: integer("analytics_enabled", { mode: "boolean" }).notNull().default(false),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at"),
}, (t) => [uniqueIndex("workspaces_name_uq").on(sql`lower(${t.name})`)]);

/** Keys that authenticate calls to the service. Stored only as base64(SHA-256). */
export const rootKeys = sqliteTable("root_keys", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  name: text("name").notNull(),
  hash: text("hash").notNull(),
  start: text("start").notNull(),
  /** JSON array of `<resource>.<id>.<action>` strings. */
  permissions: text("permissions", { mode: "json" }).$type<string[]>().notNull(),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
  expiresAt: integer("expires_at"),
  createdAt: integer("created_at").notNull(),
  revokedAt: integer("revoked_at"),
}, (t) => [uniqueIndex("root_keys_hash_uq").on(t.hash), index("root_keys_workspace_idx").on(t.workspaceId)]);

/**
 * What each workspace's records take, against its quotas (services/quotas): live records per kind
 * and their bytes as counted by the triggers of migration 0012 (one row per workspace, kept by the
 * database on every insert, delete and size-changing update, whatever path made it).
 */
export const workspaceUsage = sqliteTable("workspace_usage", {
  workspaceId: text("workspace_id").primaryKey(),
  keys: integer("keys").notNull().default(0),
  identities: integer("identities").notNull().default(0),
  permissions: integer("permissions").notNull().default(0),
  roles: integer("roles").notNull().default(0),
  namespaces: integer("namespaces").notNull().default(0),
  bytes: integer("bytes").notNull().default(0),
});
