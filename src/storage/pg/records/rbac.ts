/**
 * The records of permissions, roles and their links on PostgreSQL (cluster mode), as records/rbac.ts
 * answers: names and slugs compared by lower() under COLLATE "C", which folds ASCII letters only,
 * as SQLite's lower() and the unique indexes do.
 */
import { and, eq, inArray, sql, type SQLWrapper } from "drizzle-orm";
import { rethrowPgDuplicate, type PgDb } from "../db.ts";
import { keyPermissions, keyRoles, permissions, rolePermissions, roles } from "../schema/index.ts";
import type { PermissionRow, RbacStore } from "../../records/rbac.ts";

/** lower() of text folding ASCII letters only, as SQLite's. */
const lowerAscii = (value: SQLWrapper | string) => sql`lower(${value} COLLATE "C")`;

export class PgRbacStore implements RbacStore {
  constructor(private readonly db: PgDb) {}

  async rolesNamed(workspaceId: string, lowerNames: readonly string[]): Promise<Array<{ id: string; name: string }>> {
    if (lowerNames.length === 0) return [];
    return this.db.select({ id: roles.id, name: roles.name }).from(roles)
      .where(and(eq(roles.workspaceId, workspaceId), inArray(lowerAscii(roles.name), [...lowerNames])));
  }

  async permissionIdBySlug(workspaceId: string, slug: string): Promise<string | undefined> {
    const [row] = await this.db.select({ id: permissions.id }).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`${lowerAscii(permissions.slug)} = ${lowerAscii(slug)}`));
    return row?.id;
  }

  async permissionNamed(workspaceId: string, name: string): Promise<{ name: string; slug: string } | undefined> {
    const [row] = await this.db.select({ name: permissions.name, slug: permissions.slug }).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`${lowerAscii(permissions.name)} = ${lowerAscii(name)}`)).limit(1);
    return row;
  }

  async insertPermission(row: PermissionRow): Promise<void> {
    await rethrowPgDuplicate(async () => {
      await this.db.insert(permissions).values(row);
    });
  }

  async keyRoles(keyId: string): Promise<Array<{ id: string; name: string }>> {
    return this.db.select({ id: roles.id, name: roles.name }).from(keyRoles)
      .innerJoin(roles, eq(roles.id, keyRoles.roleId)).where(eq(keyRoles.keyId, keyId));
  }

  async keyPermissionSlugs(keyId: string): Promise<string[]> {
    const rows = await this.db.select({ slug: permissions.slug }).from(keyPermissions)
      .innerJoin(permissions, eq(permissions.id, keyPermissions.permissionId)).where(eq(keyPermissions.keyId, keyId));
    return rows.map((p) => p.slug);
  }

  async rolePermissionSlugs(roleIds: readonly string[]): Promise<string[]> {
    if (roleIds.length === 0) return [];
    const rows = await this.db.select({ slug: permissions.slug }).from(rolePermissions)
      .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
      .where(inArray(rolePermissions.roleId, [...roleIds]));
    return rows.map((p) => p.slug);
  }

  async setKeyPermissions(workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): Promise<void> {
    await this.db.delete(keyPermissions).where(eq(keyPermissions.keyId, keyId));
    if (permissionIds.length === 0) return;
    await this.db.insert(keyPermissions).values(permissionIds.map((permissionId) => ({ keyId, permissionId, workspaceId, createdAt: nowMs })));
  }

  async setKeyRoles(workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): Promise<void> {
    await this.db.delete(keyRoles).where(eq(keyRoles.keyId, keyId));
    if (roleIds.length === 0) return;
    await this.db.insert(keyRoles).values(roleIds.map((roleId) => ({ keyId, roleId, workspaceId, createdAt: nowMs })));
  }

  async setRolePermissions(workspaceId: string, roleId: string, permissionIds: readonly string[], nowMs: number): Promise<void> {
    await this.db.delete(rolePermissions).where(eq(rolePermissions.roleId, roleId));
    if (permissionIds.length === 0) return;
    await this.db.insert(rolePermissions).values(permissionIds.map((permissionId) => ({ roleId, permissionId, workspaceId, createdAt: nowMs })));
  }
}
