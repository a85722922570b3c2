/**
 * The records of permissions, roles and their links on PostgreSQL (cluster mode), as records/rbac.ts
 * answers: names and slugs compared by lower() under COLLATE "C", which folds ASCII letters only,
 * as SQLite's lower() and the unique indexes do.
 */
import { and, asc, eq, gte, inArray, lte, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { byBytes, rethrowPgDuplicate, type PgDb } from "../db.ts";
import { keyPermissions, keyRoles, permissions, rolePermissions, roles } from "../schema/index.ts";
import { ROLE_PERMISSION_OVERHEAD_BYTES, type PermissionRecord, type PermissionRow, type RbacListQuery, type RbacStore, type RoleRecord, type RoleRow } from "../../records/rbac.ts";
import type { SizedRow } from "../../records/sized-rows.ts";

/** lower() of text folding ASCII letters only, as SQLite's. */
const lowerAscii = (value: SQLWrapper | string) => sql`lower(${value} COLLATE "C")`;

const permissionColumns = { id: permissions.id, name: permissions.name, slug: permissions.slug, description: permissions.description };
const roleColumns = { id: roles.id, name: roles.name, description: roles.description };

function roleListConditions(query: RbacListQuery): SQL | undefined {
  const conditions = [eq(roles.workspaceId, query.workspaceId)];
  if (query.cursor !== undefined) conditions.push(gte(byBytes(roles.id), query.cursor));
  if (query.until !== undefined) conditions.push(lte(byBytes(roles.id), query.until));
  if (query.search !== undefined) conditions.push(contains(query.search, [roles.id, roles.name, roles.description]));
  return and(...conditions);
}

/** `search` as a substring of any of `columns`, folding ASCII letters only (strpos: `%` and `_` are literal). */
function contains(search: string, columns: SQLWrapper[]): SQL {
  return sql`(${sql.join(columns.map((c) => sql`strpos(${lowerAscii(sql`coalesce(${c}, '')`)}, ${lowerAscii(search)}) > 0`), sql` or `)})`;
}

export class PgRbacStore implements RbacStore {
  constructor(private readonly db: PgDb) {}

  async findPermission(workspaceId: string, idOrSlug: string): Promise<PermissionRecord | undefined> {
    const [row] = await this.db.select(permissionColumns).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId),
        sql`(${byBytes(permissions.id)} = ${idOrSlug} or ${lowerAscii(permissions.slug)} = ${lowerAscii(idOrSlug)})`))
      .orderBy(sql`${byBytes(permissions.id)} = ${idOrSlug} desc`).limit(1);
    return row;
  }

  async listPermissions(query: RbacListQuery): Promise<PermissionRecord[]> {
    const conditions = [eq(permissions.workspaceId, query.workspaceId)];
    if (query.cursor !== undefined) conditions.push(gte(byBytes(permissions.id), query.cursor));
    if (query.search !== undefined) conditions.push(contains(query.search, [permissions.id, permissions.name, permissions.slug, permissions.description]));
    return this.db.select(permissionColumns).from(permissions).where(and(...conditions)).orderBy(asc(byBytes(permissions.id))).limit(query.limit);
  }

  async deletePermission(permissionId: string): Promise<void> {
    await this.db.delete(permissions).where(eq(permissions.id, permissionId));
  }

  async findRole(workspaceId: string, idOrName: string): Promise<RoleRecord | undefined> {
    const [row] = await this.db.select(roleColumns).from(roles)
      .where(and(eq(roles.workspaceId, workspaceId),
        sql`(${byBytes(roles.id)} = ${idOrName} or ${lowerAscii(roles.name)} = ${lowerAscii(idOrName)})`))
      .orderBy(sql`${byBytes(roles.id)} = ${idOrName} desc`).limit(1);
    return row;
  }

  async listRoles(query: RbacListQuery): Promise<RoleRecord[]> {
    return this.db.select(roleColumns).from(roles).where(roleListConditions(query)).orderBy(asc(byBytes(roles.id))).limit(query.limit);
  }

  async listRoleSizes(query: RbacListQuery): Promise<SizedRow[]> {
    // "roles"."id" spelled out: drizzle writes a one-table query's columns bare, and a bare id here would be p.id.
    const bytes = sql<number>`(select coalesce(sum(octet_length(p.id) + octet_length(p.name) + octet_length(p.slug) + coalesce(octet_length(p.description), 0) + ${ROLE_PERMISSION_OVERHEAD_BYTES}::int), 0)
      from role_permissions rp join permissions p on p.id = rp.permission_id where rp.role_id = "roles"."id")::int`;
    return this.db.select({ id: roles.id, bytes }).from(roles).where(roleListConditions(query)).orderBy(asc(byBytes(roles.id))).limit(query.limit);
  }

  async insertRole(row: RoleRow): Promise<void> {
    await rethrowPgDuplicate(async () => {
      await this.db.insert(roles).values(row);
    });
  }

  async markRoleUpdated(roleId: string, nowMs: number): Promise<void> {
    await this.db.update(roles).set({ updatedAt: nowMs }).where(eq(roles.id, roleId));
  }

  async deleteRole(roleId: string): Promise<void> {
    await this.db.delete(roles).where(eq(roles.id, roleId));
  }

  async rolePermissions(roleIds: readonly string[]): Promise<Array<PermissionRecord & { roleId: string }>> {
    if (roleIds.length === 0) return [];
    return this.db.select({ roleId: rolePermissions.roleId, ...permissionColumns }).from(rolePermissions)
      .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
      .where(inArray(rolePermissions.roleId, [...roleIds])).orderBy(asc(byBytes(permissions.id)));
  }

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
