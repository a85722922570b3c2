/** PostgreSQL twin of storage/schema/apis.ts: APIs and the key spaces behind them. */
import { boolean, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";
import { workspaces } from "./workspaces.ts";

/** Where an API's keys live; one per API. Holds the defaults for new keys. */
export const keySpaces = pgTable("key_spaces", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  defaultPrefix: text("default_prefix"),
  defaultBytes: integer("default_bytes"),
  storeEncryptedKeys: boolean("store_encrypted_keys").notNull().default(true),
  createdAt: int8("created_at").notNull(),
});

/** A container for keys, as the user's own API sees it. Soft-deleted. */
export const apis = pgTable("apis", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  keySpaceId: text("key_space_id").notNull().references(() => keySpaces.id),
  name: text("name").notNull(),
  deleteProtection: boolean("delete_protection").notNull().default(false),
  /** Comma-separated allowed client IPs; null allows every address. */
  ipWhitelist: text("ip_whitelist"),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
  deletedAt: int8("deleted_at"),
}, (t) => [index("apis_workspace_idx").on(t.workspaceId), index("apis_key_space_idx").on(t.keySpaceId)]);
