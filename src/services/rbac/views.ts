/**
 * Read side of permissions and roles, as units of work over the records: lookups by id, slug or
 * name, list pages, and the shapes the API returns (upstream's `Permission` and `Role`; optional
 * fields left out, never null).
 */
import type { PermissionRecord, Records, RoleRecord } from "../../storage/records/index.ts";
import { step, type Work } from "../../storage/work.ts";
import { fitPage, jsonBytes, planPage, type Page } from "../pages/index.ts";

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
export type { Page } from "../pages/index.ts";

export interface ListInput {
  limit?: number;
  cursor?: string;
  search?: string;
}

export const DEFAULT_PAGE_LIMIT = 100;

/** `text` with ASCII letters lowered, as SQLite's lower() and the unique indexes of names fold it. */
export function lowerAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

export function toPermissionView(row: PermissionRecord): PermissionView {
  return { id: row.id, name: row.name, slug: row.slug, ...(row.description ? { description: row.description } : {}) };
}

function toRoleView(row: RoleRecord, perms: PermissionView[]): RoleView {
  return {
    id: row.id,
    name: row.name,
    ...(row.description ? { description: row.description } : {}),
    ...(perms.length > 0 ? { permissions: perms } : {}),
  };
}

/** The permission with this id, or else with this slug (case-insensitive), in the workspace. */
export function* findPermissionIn(records: Records, workspaceId: string, idOrSlug: string): Work<PermissionView | undefined> {
  const row = yield* step(records.rbac.findPermission(workspaceId, idOrSlug));
  return row ? toPermissionView(row) : undefined;
}

/**
 * Which of `name` and `slug` another permission of the workspace already carries, ignoring case as
 * the unique indexes compare; the name first.
 */
export function* permissionClashIn(records: Records, workspaceId: string, name: string, slug: string): Work<"name" | "slug" | undefined> {
  if ((yield* step(records.rbac.permissionNamed(workspaceId, name))) !== undefined) return "name";
  if ((yield* step(records.rbac.permissionIdBySlug(workspaceId, slug))) !== undefined) return "slug";
  return undefined;
}

/** Whether a role with this name (ignoring case, as the unique index compares) exists in the workspace. */
export function* roleNameTakenIn(records: Records, workspaceId: string, name: string): Work<boolean> {
  return (yield* step(records.rbac.rolesNamed(workspaceId, [lowerAscii(name)]))).length > 0;
}

/** The role with this id, or else with this name (case-insensitive), in the workspace, with its permissions. */
export function* findRoleIn(records: Records, workspaceId: string, idOrName: string): Work<RoleView | undefined> {
  const row = yield* step(records.rbac.findRole(workspaceId, idOrName));
  if (!row) return undefined;
  return toRoleView(row, yield* rolePermissionListIn(records, row.id));
}

/** One role's permissions, ordered by permission id. */
export function* rolePermissionListIn(records: Records, roleId: string): Work<PermissionView[]> {
  return (yield* rolePermissionViews(records, [roleId])).get(roleId) ?? [];
}

/** Each role's permissions, ordered by permission id. */
function* rolePermissionViews(records: Records, roleIds: string[]): Work<Map<string, PermissionView[]>> {
  const out = new Map<string, PermissionView[]>();
  for (const { roleId, ...perm } of yield* step(records.rbac.rolePermissions(roleIds))) {
    const list = out.get(roleId) ?? [];
    list.push(toPermissionView(perm));
    out.set(roleId, list);
  }
  return out;
}

/** The store's list query for a page of `limit` rows and the next page's first id; a blank search matches all. */
function listQuery(workspaceId: string, input: ListInput, limit: number) {
  return {
    workspaceId, limit: limit + 1,
    ...(input.cursor ? { cursor: input.cursor } : {}),
    ...(input.search !== undefined && input.search.trim() !== "" ? { search: input.search } : {}),
  };
}

/** Splits `limit + 1` rows into a page within `budgetBytes` and the next page's first id. */
function toPage<R extends { id: string }, V extends { id: string }>(rows: R[], limit: number, items: V[], budgetBytes: number): Page<V> {
  return fitPage(items, (item) => item.id, jsonBytes, budgetBytes, rows.length > limit ? rows[limit]?.id : undefined);
}

/** One page of the workspace's permissions, sorted by id, within `budgetBytes` (services/pages). Search covers id, name, slug and description. */
export function* listPermissionPageIn(records: Records, workspaceId: string, input: ListInput, budgetBytes: number): Work<Page<PermissionView>> {
  const limit = input.limit ?? DEFAULT_PAGE_LIMIT;
  const rows = yield* step(records.rbac.listPermissions(listQuery(workspaceId, input, limit)));
  return toPage(rows, limit, rows.slice(0, limit).map(toPermissionView), budgetBytes);
}

/** One page of the workspace's roles with their permissions, sorted by id, within `budgetBytes` (services/pages). Search covers id, name and description. */
export function* listRolePageIn(records: Records, workspaceId: string, input: ListInput, budgetBytes: number): Work<Page<RoleView>> {
  const limit = input.limit ?? DEFAULT_PAGE_LIMIT;
  const query = listQuery(workspaceId, input, limit);
  // A role may hold a thousand permissions: planned from their sizes, so only the page's are read.
  const plan = planPage(yield* step(records.rbac.listRoleSizes(query)), limit, budgetBytes);
  const page = plan.until === undefined ? [] : yield* step(records.rbac.listRoles({ ...query, until: plan.until, limit }));
  const perms = yield* rolePermissionViews(records, page.map((r) => r.id));
  const bytesOf = (role: RoleView) => {
    const { permissions, ...own } = role;
    return (plan.storedBytes.get(role.id) ?? jsonBytes(permissions ?? [])) + jsonBytes(own);
  };
  return fitPage(page.map((r) => toRoleView(r, perms.get(r.id) ?? [])), (role) => role.id, bytesOf, budgetBytes, plan.next);
}
