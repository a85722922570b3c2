import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { keySpaces } from "./apis.ts";
import { workspaces } from "./workspaces.ts";

/** An owner of keys outside the service (a user, an organisation), addressed by `externalId`. */
export const identities = sqliteTable("identities", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  externalId: text("external_id").notNull(),
  meta: text("meta", { mode: "json" }).$type<Record<string, unknown>>(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at"),
  deletedAt: integer("deleted_at"),
}, (t) => [
  uniqueIndex("identities_external_id_live_uq").on(t.workspaceId, t.externalId).where(sql`${t.deletedAt} is null`),
]);

/** An end-user key. The key string itself is never stored: only base64(SHA-256) and `start`. */
export const keys = sqliteTable("keys", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  keySpaceId: text("key_space_id").notNull().references(() => keySpaces.id),
  hash: text("hash").notNull(),
  start: text("start").notNull(),
  name: text("name"),
  identityId: text("identity_id").references(() => identities.id),
  meta: text("meta", { mode: "json" }).$type<Record<string, unknown>>(),
  expiresAt: integer("expires_at"),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
  /** Null means unlimited usage. */
  remaining: integer("remaining"),
  refillAmount: integer("refill_amount"),
  /** Null with a refill amount means a daily refill; 1..31 a monthly one. */
  refillDay: integer("refill_day"),
  lastRefillAt: integer("last_refill_at"),
  recoverable: integer("recoverable", { mode: "boolean" }).notNull().default(false),
  /** AES-256-GCM ciphertext of the key string under the workspace data key (recoverable keys). */
  encrypted: text("encrypted"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at"),
  lastUsedAt: integer("last_used_at"),
  deletedAt: integer("deleted_at"),
}, (t) => [
  uniqueIndex("keys_hash_uq").on(t.hash),
  index("keys_key_space_idx").on(t.keySpaceId, t.id),
  index("keys_identity_idx").on(t.identityId),
]);

/** Per-workspace data keys for recoverable keys, encrypted under the master key. */
export const dataKeys = sqliteTable("data_keys", {
  workspaceId: text("workspace_id").primaryKey().references(() => workspaces.id),
  encrypted: text("encrypted").notNull(),
  createdAt: integer("created_at").notNull(),
});
