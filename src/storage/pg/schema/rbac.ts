/**
 * PostgreSQL twin of storage/schema/rbac.ts: permissions, roles and their links to keys. Names fold
 * by lower() under COLLATE "C", ASCII letters only, as SQLite's lower() folds them.
 */
import { sql } from "drizzle-orm";
import { index, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";
import { keys } from "./keys.ts";
import { workspaces } from "./workspaces.ts";

/** A permission an end-user key can hold. Names and slugs are unique per workspace, case-insensitively. */
export const permissions = pgTable("permissions", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  name: text("name").notNull(),
  slug: text("slug").notNull(),
  description: text("description"),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
}, (t) => [
  uniqueIndex("permissions_name_uq").on(t.workspaceId, sql`lower(${t.name} COLLATE "C")`),
  uniqueIndex("permissions_slug_uq").on(t.workspaceId, sql`lower(${t.slug} COLLATE "C")`),
]);

/** A named set of permissions. Names are unique per workspace, case-insensitively. */
export const roles = pgTable("roles", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull().references(() => workspaces.id),
  name: text("name").notNull(),
  description: text("description"),
  createdAt: int8("created_at").notNull(),
  updatedAt: int8("updated_at"),
}, (t) => [uniqueIndex("roles_name_uq").on(t.workspaceId, sql`lower(${t.name} COLLATE "C")`)]);

export const rolePermissions = pgTable("role_permissions", {
  roleId: text("role_id").notNull().references(() => roles.id, { onDelete: "cascade" }),
  permissionId: text("permission_id").notNull().references(() => permissions.id, { onDelete: "cascade" }),
  workspaceId: text("workspace_id").notNull(),
  createdAt: int8("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.roleId, t.permissionId] }), index("role_permissions_perm_idx").on(t.permissionId)]);

export const keyPermissions = pgTable("key_permissions", {
  keyId: text("key_id").notNull().references(() => keys.id, { onDelete: "cascade" }),
  permissionId: text("permission_id").notNull().references(() => permissions.id, { onDelete: "cascade" }),
  workspaceId: text("workspace_id").notNull(),
  createdAt: int8("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.keyId, t.permissionId] }), index("key_permissions_perm_idx").on(t.permissionId)]);

export const keyRoles = pgTable("key_roles", {
  keyId: text("key_id").notNull().references(() => keys.id, { onDelete: "cascade" }),
  roleId: text("role_id").notNull().references(() => roles.id, { onDelete: "cascade" }),
  workspaceId: text("workspace_id").notNull(),
  createdAt: int8("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.keyId, t.roleId] }), index("key_roles_role_idx").on(t.roleId)]);
