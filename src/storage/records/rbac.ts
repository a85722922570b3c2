/**
 * The records of permissions, roles and their links to keys (embedded: drizzle over SQLite). Names
 * and slugs compare as the unique indexes compare them: lower(), which folds ASCII letters only.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { keyPermissions, keyRoles, permissions, rolePermissions, roles } from "../schema/index.ts";
import { rethrowDuplicate } from "./errors.ts";

export interface PermissionRow {
  id: string;
  workspaceId: string;
  name: string;
  slug: string;
  description: string | null;
  createdAt: number;
}

export interface RbacStore {
  /** Roles of the workspace whose lower(name) is one of `lowerNames`. */
  rolesNamed(workspaceId: string, lowerNames: readonly string[]): Maybe<Array<{ id: string; name: string }>>;
  /** The id of the permission whose slug equals `slug` ignoring ASCII case. */
  permissionIdBySlug(workspaceId: string, slug: string): Maybe<string | undefined>;
  /** A permission whose name equals `name` ignoring ASCII case. */
  permissionNamed(workspaceId: string, name: string): Maybe<{ name: string; slug: string } | undefined>;
  /** Inserts a permission; a name or slug taken (ignoring ASCII case) throws DuplicateRecord. */
  insertPermission(row: PermissionRow): Maybe<void>;
  /** A key's roles. */
  keyRoles(keyId: string): Maybe<Array<{ id: string; name: string }>>;
  /** The slugs of a key's direct permissions. */
  keyPermissionSlugs(keyId: string): Maybe<string[]>;
  /** The slugs of the permissions of these roles (with repeats). */
  rolePermissionSlugs(roleIds: readonly string[]): Maybe<string[]>;
  /** Replaces a key's direct permissions. */
  setKeyPermissions(workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): Maybe<void>;
  /** Replaces a key's roles. */
  setKeyRoles(workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): Maybe<void>;
  /** Replaces a role's permissions. */
  setRolePermissions(workspaceId: string, roleId: string, permissionIds: readonly string[], nowMs: number): Maybe<void>;
}

export class SqliteRbacStore implements RbacStore {
  constructor(private readonly db: Db) {}

  rolesNamed(workspaceId: string, lowerNames: readonly string[]): Array<{ id: string; name: string }> {
    if (lowerNames.length === 0) return [];
    return this.db.select({ id: roles.id, name: roles.name }).from(roles)
      .where(and(eq(roles.workspaceId, workspaceId), inArray(sql`lower(${roles.name})`, [...lowerNames]))).all();
  }

  permissionIdBySlug(workspaceId: string, slug: string): string | undefined {
    return this.db.select({ id: permissions.id }).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`lower(${permissions.slug}) = lower(${slug})`)).get()?.id;
  }

  permissionNamed(workspaceId: string, name: string): { name: string; slug: string } | undefined {
    return this.db.select({ name: permissions.name, slug: permissions.slug }).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`lower(${permissions.name}) = lower(${name})`)).limit(1).get();
  }

  insertPermission(row: PermissionRow): void {
    rethrowDuplicate(() => this.db.insert(permissions).values(row).run());
  }

  keyRoles(keyId: string): Array<{ id: string; name: string }> {
    return this.db.select({ id: roles.id, name: roles.name }).from(keyRoles)
      .innerJoin(roles, eq(roles.id, keyRoles.roleId)).where(eq(keyRoles.keyId, keyId)).all();
  }

  keyPermissionSlugs(keyId: string): string[] {
    return this.db.select({ slug: permissions.slug }).from(keyPermissions)
      .innerJoin(permissions, eq(permissions.id, keyPermissions.permissionId)).where(eq(keyPermissions.keyId, keyId)).all().map((p) => p.slug);
  }

  rolePermissionSlugs(roleIds: readonly string[]): string[] {
    if (roleIds.length === 0) return [];
    return this.db.select({ slug: permissions.slug }).from(rolePermissions)
      .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
      .where(inArray(rolePermissions.roleId, [...roleIds])).all().map((p) => p.slug);
  }

  setKeyPermissions(workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): void {
    this.db.delete(keyPermissions).where(eq(keyPermissions.keyId, keyId)).run();
    if (permissionIds.length === 0) return;
    this.db.insert(keyPermissions).values(permissionIds.map((permissionId) => ({ keyId, permissionId, workspaceId, createdAt: nowMs }))).run();
  }

  setKeyRoles(workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): void {
    this.db.delete(keyRoles).where(eq(keyRoles.keyId, keyId)).run();
    if (roleIds.length === 0) return;
    this.db.insert(keyRoles).values(roleIds.map((roleId) => ({ keyId, roleId, workspaceId, createdAt: nowMs }))).run();
  }

  setRolePermissions(workspaceId: string, roleId: string, permissionIds: readonly string[], nowMs: number): void {
    this.db.delete(rolePermissions).where(eq(rolePermissions.roleId, roleId)).run();
    if (permissionIds.length === 0) return;
    this.db.insert(rolePermissions).values(permissionIds.map((permissionId) => ({ roleId, permissionId, workspaceId, createdAt: nowMs }))).run();
  }
}
