/** PostgreSQL twin of storage/schema/keys.ts: identities, end-user keys and workspace data keys. */
import { sql } from "drizzle-orm";
import { boolean, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { keySpaces } from "./apis.ts";
import { int8, jsonText } from "./columns.ts";
import { workspaces } from "./workspaces.ts";

/** An owner of keys outside the service (a user, an organisation), addressed by `externalId`. */
export const identities = pgTable("identities", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  externalId: text("external_id").notNull(),
  meta: jsonText<Record<string, unknown>>("meta"),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
  deletedAt: int8("deleted_at"),
}, (t) => [
  uniqueIndex("identities_external_id_live_uq").on(t.workspaceId, t.externalId).where(sql`${t.deletedAt} is null`),
]);

/** An end-user key. The key string itself is never stored: only base64(SHA-256) and `start`. */
export const keys = pgTable("keys", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  keySpaceId: text("key_space_id").notNull().references(() => keySpaces.id),
  hash: text("hash").notNull(),
  start: text("start").notNull(),
  name: text("name"),
  identityId: text("identity_id").references(() => identities.id),
  meta: jsonText<Record<string, unknown>>("meta"),
  expiresAt: int8("expires_at"),
  enabled: boolean("enabled").notNull().default(true),
  /** Null means unlimited usage. */
  remaining: int8("remaining"),
  refillAmount: int8("refill_amount"),
  /** Null with a refill amount means a daily refill; 1..31 a monthly one. */
  refillDay: integer("refill_day"),
  lastRefillAt: int8("last_refill_at"),
  recoverable: boolean("recoverable").notNull().default(false),
  /** AES-256-GCM ciphertext of the key string under the workspace data key (recoverable keys). */
  encrypted: text("encrypted"),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
  lastUsedAt: int8("last_used_at"),
  deletedAt: int8("deleted_at"),
}, (t) => [
  uniqueIndex("keys_hash_uq").on(t.hash),
  index("keys_key_space_idx").on(t.keySpaceId, t.id),
  index("keys_identity_idx").on(t.identityId),
]);

/** Per-workspace data keys for recoverable keys, encrypted under the master key. */
export const dataKeys = pgTable("data_keys", {
  workspaceId: text("workspace_id").primaryKey().references(() => workspaces.id),
  encrypted: text("encrypted").notNull(),
  createdAt: int8("created_at").notNull(),
});
