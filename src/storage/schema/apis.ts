import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { workspaces } from "./workspaces.ts";

/** Where an API's keys live; one per API. Holds the defaults for new keys. */
export const keySpaces = sqliteTable("key_spaces", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  defaultPrefix: text("default_prefix"),
  defaultBytes: integer("default_bytes"),
  storeEncryptedKeys: integer("store_encrypted_keys", { mode: "boolean" }).notNull().default(true),
  createdAt: integer("created_at").notNull(),
});

/** A container for keys, as the user's own API sees it. Soft-deleted. */
export const apis = sqliteTable("apis", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  keySpaceId: text("key_space_id").notNull().references(() => keySpaces.id),
  name: text("name").notNull(),
  deleteProtection: integer("delete_protection", { mode: "boolean" }).notNull().default(false),
  /** Comma-separated allowed client IPs; null allows every address. */
  ipWhitelist: text("ip_whitelist"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at"),
  deletedAt: integer("deleted_at"),
}, (t) => [index("apis_workspace_idx").on(t.workspaceId), index("apis_key_space_idx").on(t.keySpaceId)]);
