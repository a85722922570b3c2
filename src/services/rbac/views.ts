/**
 * Read side of permissions and roles: lookups by id, slug or name, list pages, and the shapes the
 * API returns (upstream's `Permission` and `Role`; optional fields left out, never null).
 */
import { and, asc, eq, gte, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { permissions, rolePermissions, roles } from "../../storage/schema/index.ts";

export interface PermissionView {
  id: string;
  name: string;
  slug: string;
  description?: string;
}

/** A role; `permissions` is left out when the role has none. */
export interface RoleView {
  id: string;
  name: string;
  description?: string;
  permissions?: PermissionView[];
}

/** A list page; `cursor` is the id of the first row of the next page, undefined on the last page. */
export interface Page<T> {
  items: T[];
  cursor: string | undefined;
}

export interface ListInput {
  limit?: number;
  cursor?: string;
  search?: string;
}

export const DEFAULT_PAGE_LIMIT = 100;

type PermissionRow = { id: string; name: string; slug: string; description: string | null };
type RoleRow = { id: string; name: string; description: string | null };

const permissionColumns = { id: permissions.id, name: permissions.name, slug: permissions.slug, description: permissions.description };
const roleColumns = { id: roles.id, name: roles.name, description: roles.description };

export function toPermissionView(row: PermissionRow): PermissionView {
  return { id: row.id, name: row.name, slug: row.slug, ...(row.description ? { description: row.description } : {}) };
}

function toRoleView(row: RoleRow, perms: PermissionView[]): RoleView {
  return {
    id: row.id,
    name: row.name,
    ...(row.description ? { description: row.description } : {}),
    ...(perms.length > 0 ? { permissions: perms } : {}),
  };
}

/** The permission with this id, or else with this slug (case-insensitive), in the workspace. */
export function findPermission(db: Db, workspaceId: string, idOrSlug: string): PermissionView | undefined {
  const row = db.select(permissionColumns).from(permissions)
    .where(and(eq(permissions.workspaceId, workspaceId), sql`(${permissions.id} = ${idOrSlug} or lower(${permissions.slug}) = lower(${idOrSlug}))`))
    .orderBy(sql`${permissions.id} = ${idOrSlug} desc`).limit(1).get();
  return row ? toPermissionView(row) : undefined;
}

/** The permission whose name or slug equals `name` / `slug` ignoring case, with which of the two clashed. */
export function findPermissionConflict(db: Db, workspaceId: string, name: string, slug: string): "name" | "slug" | undefined {
  // Compared with SQLite's lower(), exactly as the unique indexes compare.
  const nameClash = sql<number>`lower(${permissions.name}) = lower(${name})`;
  const row = db.select({ nameClash }).from(permissions)
    .where(and(eq(permissions.workspaceId, workspaceId), sql`(${nameClash} or lower(${permissions.slug}) = lower(${slug}))`))
    .orderBy(sql`${nameClash} desc`).limit(1).get();
  if (!row) return undefined;
  return row.nameClash ? "name" : "slug";
}

/** The role with this id, or else with this name (case-insensitive), in the workspace, with its permissions. */
export function findRole(db: Db, workspaceId: string, idOrName: string): RoleView | undefined {
  const row = findRoleRow(db, workspaceId, idOrName);
  return row ? toRoleView(row, rolePermissionViews(db, [row.id]).get(row.id) ?? []) : undefined;
}

export function findRoleRow(db: Db, workspaceId: string, idOrName: string): RoleRow | undefined {
  return db.select(roleColumns).from(roles)
    .where(and(eq(roles.workspaceId, workspaceId), sql`(${roles.id} = ${idOrName} or lower(${roles.name}) = lower(${idOrName}))`))
    .orderBy(sql`${roles.id} = ${idOrName} desc`).limit(1).get();
}

/** Whether a role with this name (ignoring case, as the unique index compares) exists in the workspace. */
export function roleNameTaken(db: Db, workspaceId: string, name: string): boolean {
  return db.select({ id: roles.id }).from(roles)
    .where(and(eq(roles.workspaceId, workspaceId), sql`lower(${roles.name}) = lower(${name})`)).limit(1).get() !== undefined;
}

/** One role's permissions, ordered by permission id. */
export function rolePermissionList(db: Db, roleId: string): PermissionView[] {
  return rolePermissionViews(db, [roleId]).get(roleId) ?? [];
}

/** Each role's permissions, ordered by permission id. */
function rolePermissionViews(db: Db, roleIds: string[]): Map<string, PermissionView[]> {
  const out = new Map<string, PermissionView[]>();
  if (roleIds.length === 0) return out;
  const rows = db.select({ roleId: rolePermissions.roleId, ...permissionColumns }).from(rolePermissions)
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(inArray(rolePermissions.roleId, roleIds)).orderBy(asc(permissions.id)).all();
  for (const { roleId, ...perm } of rows) {
    const list = out.get(roleId) ?? [];
    list.push(toPermissionView(perm));
    out.set(roleId, list);
  }
  return out;
}

/** Case-insensitive substring match on any of `columns`; `%` and `_` are literal. Blank search matches all. */
function searchCondition(search: string | undefined, columns: SQL[]): SQL | undefined {
  if (search === undefined || search.trim() === "") return undefined;
  return sql`(${sql.join(columns.map((c) => sql`instr(lower(coalesce(${c}, '')), lower(${search})) > 0`), sql` or `)})`;
}

/** Splits `limit + 1` rows into a page and the next page's first id. */
function toPage<R extends { id: string }, V>(rows: R[], limit: number, view: (rows: R[]) => V[]): Page<V> {
  return { items: view(rows.slice(0, limit)), cursor: rows.length > limit ? rows[limit]?.id : undefined };
}

/** One page of the workspace's permissions, sorted by id. Search covers id, name, slug and description. */
export function listPermissionPage(db: Db, workspaceId: string, input: ListInput): Page<PermissionView> {
  const limit = input.limit ?? DEFAULT_PAGE_LIMIT;
  const conditions = [eq(permissions.workspaceId, workspaceId)];
  if (input.cursor) conditions.push(gte(permissions.id, input.cursor));
  const search = searchCondition(input.search, [sql`${permissions.id}`, sql`${permissions.name}`, sql`${permissions.slug}`, sql`${permissions.description}`]);
  if (search) conditions.push(search);
  const rows = db.select(permissionColumns).from(permissions).where(and(...conditions)).orderBy(asc(permissions.id)).limit(limit + 1).all();
  return toPage(rows, limit, (page) => page.map(toPermissionView));
}

/** One page of the workspace's roles with their permissions, sorted by id. Search covers id, name and description. */
export function listRolePage(db: Db, workspaceId: string, input: ListInput): Page<RoleView> {
  const limit = input.limit ?? DEFAULT_PAGE_LIMIT;
  const conditions = [eq(roles.workspaceId, workspaceId)];
  if (input.cursor) conditions.push(gte(roles.id, input.cursor));
  const search = searchCondition(input.search, [sql`${roles.id}`, sql`${roles.name}`, sql`${roles.description}`]);
  if (search) conditions.push(search);
  const rows = db.select(roleColumns).from(roles).where(and(...conditions)).orderBy(asc(roles.id)).limit(limit + 1).all();
  return toPage(rows, limit, (page) => {
    const perms = rolePermissionViews(db, page.map((r) => r.id));
    return page.map((r) => toRoleView(r, perms.get(r.id) ?? []));
  });
}
