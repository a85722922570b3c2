/**
 * PostgreSQL twin of storage/schema/workspaces.ts: workspaces and their root keys. Names fold by
 * lower() under COLLATE "C", ASCII letters only, as SQLite's lower() folds them.
 */
import { sql } from "drizzle-orm";
import { boolean, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { int8, jsonText } from "./columns.ts";

/** A tenant. Every other record belongs to exactly one workspace. */
export const workspaces = pgTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  analyticsEnabled: boolean("analytics_enabled").notNull().default(false),
  enabled: boolean("enabled").notNull().default(true),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
}, (t) => [uniqueIndex("workspaces_name_uq").on(sql`lower(${t.name} COLLATE "C")`)]);

/** Keys that authenticate calls to the service. Stored only as base64(SHA-256). */
export const rootKeys = pgTable("root_keys", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  name: text("name").notNull(),
  hash: text("hash").notNull(),
  start: text("start").notNull(),
  /** JSON array of `<resource>.<id>.<action>` strings. */
  permissions: jsonText<string[]>("permissions").notNull(),
  enabled: boolean("enabled").notNull().default(true),
  expiresAt: int8("expires_at"),
  createdAt: int8("created_at").notNull(),
  revokedAt: int8("revoked_at"),
}, (t) => [uniqueIndex("root_keys_hash_uq").on(t.hash), index("root_keys_workspace_idx").on(t.workspaceId)]);

/** What each workspace's records take (storage/schema/workspaces.ts), kept by the triggers of migration 0005. */
export const workspaceUsage = pgTable("workspace_usage", {
  workspaceId: text("workspace_id").primaryKey(),
  keys: int8("keys").notNull().default(0),
  identities: int8("identities").notNull().default(0),
  permissions: int8("permissions").notNull().default(0),
  roles: int8("roles").notNull().default(0),
  namespaces: int8("namespaces").notNull().default(0),
  bytes: int8("bytes").notNull().default(0),
});
