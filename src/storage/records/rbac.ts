/**
 * The records of permissions, roles and their links to keys (embedded: drizzle over SQLite). Names
 * and slugs compare as the unique indexes compare them: lower(), which folds ASCII letters only.
 */
import { and, asc, eq, gte, inArray, lte, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { keyPermissions, keyRoles, permissions, rolePermissions, roles } from "../schema/index.ts";
import { rethrowDuplicate } from "./errors.ts";
import type { IdRange, SizedRow } from "./sized-rows.ts";

/** What a role's permission adds to a listed role beyond its four strings: the member names and punctuation of its JSON. */
export const ROLE_PERMISSION_OVERHEAD_BYTES = 48;

function roleListConditions(query: RbacListQuery): SQL | undefined {
  const conditions = [eq(roles.workspaceId, query.workspaceId)];
  if (query.cursor !== undefined) conditions.push(gte(roles.id, query.cursor));
  if (query.until !== undefined) conditions.push(lte(roles.id, query.until));
  if (query.search !== undefined) conditions.push(contains(query.search, [sql`${roles.id}`, sql`${roles.name}`, sql`${roles.description}`]));
  return and(...conditions);
}

export interface PermissionRow {
  id: string;
  workspaceId: string;
  name: string;
  slug: string;
  description: string | null;
  createdAt: number;
}

/** A permission as the API shows it. */
export interface PermissionRecord {
  id: string;
  name: string;
  slug: string;
  description: string | null;
}

/** A role as the API shows it, without its permissions. */
export interface RoleRecord {
  id: string;
  name: string;
  description: string | null;
}

export interface RoleRow extends RoleRecord {
  workspaceId: string;
  createdAt: number;
}

export interface RbacListQuery extends IdRange {
  workspaceId: string;
  /** A substring of one of the searched columns, ASCII case-insensitively; `%` and `_` are literal. Non-blank. */
  search?: string;
  /** Rows to return at most. */
  limit: number;
}

export interface RbacStore {
  /** The permission with this id, or else the one whose slug equals `idOrSlug` ignoring ASCII case. */
  findPermission(workspaceId: string, idOrSlug: string): Maybe<PermissionRecord | undefined>;
  /** Permissions by id in byte order; the search covers id, name, slug and description. */
  listPermissions(query: RbacListQuery): Maybe<PermissionRecord[]>;
  /** Deletes a permission and, by cascade, its links to roles and keys. */
  deletePermission(permissionId: string): Maybe<void>;
  /** The role with this id, or else the one whose name equals `idOrName` ignoring ASCII case. */
  findRole(workspaceId: string, idOrName: string): Maybe<RoleRecord | undefined>;
  /** Roles by id in byte order; the search covers id, name and description. */
  listRoles(query: RbacListQuery): Maybe<RoleRecord[]>;
  /**
   * The ids `listRoles` answers, each with the bytes of its permissions' id, name, slug and
   * description plus ROLE_PERMISSION_OVERHEAD_BYTES each (read without them): a role may hold a thousand.
   */
  listRoleSizes(query: RbacListQuery): Maybe<SizedRow[]>;
  /** Inserts a role; a name taken (ignoring ASCII case) throws DuplicateRecord. */
  insertRole(row: RoleRow): Maybe<void>;
  /** Sets a role's updatedAt. */
  markRoleUpdated(roleId: string, nowMs: number): Maybe<void>;
  /** Deletes a role and, by cascade, its links to permissions and keys. */
  deleteRole(roleId: string): Maybe<void>;
  /** The permissions of these roles, by permission id in byte order. */
  rolePermissions(roleIds: readonly string[]): Maybe<Array<PermissionRecord & { roleId: string }>>;
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

const permissionColumns = { id: permissions.id, name: permissions.name, slug: permissions.slug, description: permissions.description };
const roleColumns = { id: roles.id, name: roles.name, description: roles.description };

/** `search` as a substring of any of `columns`, ASCII case-insensitively (instr: `%` and `_` are literal). */
function contains(search: string, columns: SQL[]): SQL {
  return sql`(${sql.join(columns.map((c) => sql`instr(lower(coalesce(${c}, '')), lower(${search})) > 0`), sql` or `)})`;
}

export class SqliteRbacStore implements RbacStore {
  constructor(private readonly db: Db) {}

  findPermission(workspaceId: string, idOrSlug: string): PermissionRecord | undefined {
    return this.db.select(permissionColumns).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`(${permissions.id} = ${idOrSlug} or lower(${permissions.slug}) = lower(${idOrSlug}))`))
      .orderBy(sql`${permissions.id} = ${idOrSlug} desc`).limit(1).get();
  }

  listPermissions(query: RbacListQuery): PermissionRecord[] {
    const conditions = [eq(permissions.workspaceId, query.workspaceId)];
    if (query.cursor !== undefined) conditions.push(gte(permissions.id, query.cursor));
    if (query.search !== undefined) conditions.push(contains(query.search, [sql`${permissions.id}`, sql`${permissions.name}`, sql`${permissions.slug}`, sql`${permissions.description}`]));
    return this.db.select(permissionColumns).from(permissions).where(and(...conditions)).orderBy(asc(permissions.id)).limit(query.limit).all();
  }

  deletePermission(permissionId: string): void {
    this.db.delete(permissions).where(eq(permissions.id, permissionId)).run();
  }

  findRole(workspaceId: string, idOrName: string): RoleRecord | undefined {
    return this.db.select(roleColumns).from(roles)
      .where(and(eq(roles.workspaceId, workspaceId), sql`(${roles.id} = ${idOrName} or lower(${roles.name}) = lower(${idOrName}))`))
      .orderBy(sql`${roles.id} = ${idOrName} desc`).limit(1).get();
  }

  listRoles(query: RbacListQuery): RoleRecord[] {
    return this.db.select(roleColumns).from(roles).where(roleListConditions(query)).orderBy(asc(roles.id)).limit(query.limit).all();
  }

  listRoleSizes(query: RbacListQuery): SizedRow[] {
    // "roles"."id" spelled out: drizzle writes a one-table query's columns bare, and a bare id here would be p.id.
    const bytes = sql<number>`(select coalesce(sum(octet_length(p.id) + octet_length(p.name) + octet_length(p.slug) + coalesce(octet_length(p.description), 0) + ${ROLE_PERMISSION_OVERHEAD_BYTES}), 0)
      from role_permissions rp join permissions p on p.id = rp.permission_id where rp.role_id = "roles"."id")`;
    return this.db.select({ id: roles.id, bytes }).from(roles).where(roleListConditions(query)).orderBy(asc(roles.id)).limit(query.limit).all();
  }

  insertRole(row: RoleRow): void {
    rethrowDuplicate(() => this.db.insert(roles).values(row).run());
  }

  markRoleUpdated(roleId: string, nowMs: number): void {
    this.db.update(roles).set({ updatedAt: nowMs }).where(eq(roles.id, roleId)).run();
  }

  deleteRole(roleId: string): void {
    this.db.delete(roles).where(eq(roles.id, roleId)).run();
  }

  rolePermissions(roleIds: readonly string[]): Array<PermissionRecord & { roleId: string }> {
    if (roleIds.length === 0) return [];
    return this.db.select({ roleId: rolePermissions.roleId, ...permissionColumns }).from(rolePermissions)
      .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
      .where(inArray(rolePermissions.roleId, [...roleIds])).orderBy(asc(permissions.id)).all();
  }

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
