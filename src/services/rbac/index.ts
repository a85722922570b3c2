/**
 * Permissions and roles of end-user keys. Permission names and slugs, and role names, are unique
 * per workspace compared case-insensitively. Permissions named on a key that do not exist yet are
 * created on the fly (name = slug); roles must exist before they are assigned.
 * The helpers here take a Db and run inside the caller's transaction; RbacService (service.ts) is
 * the permissions.* API.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { keyPermissions, keyRoles, permissions, rolePermissions, roles } from "../../storage/schema/index.ts";
import { AppError } from "../../errors/app-error.ts";

export { ensurePermissions, missingPermissionSlugs } from "./slugs.ts";
export { setKeyPermissions, setKeyRoles, setRolePermissionIds } from "./links.ts";
export { RbacService, type PermissionView, type RoleView, type RbacServiceDeps } from "./service.ts";

/**
 * Ids of the roles with these names (case-insensitive), unique, in request order (names differing
 * only in case name one role); 404 `role_not_found` for the first missing one.
 */
export function findRoleIds(db: Db, workspaceId: string, names: readonly string[]): string[] {
  const unique = [...new Set(names)];
  if (unique.length === 0) return [];
  const rows = db.select({ id: roles.id, name: roles.name }).from(roles)
    .where(and(eq(roles.workspaceId, workspaceId), inArray(sql`lower(${roles.name})`, unique.map((n) => n.toLowerCase())))).all();
  const byName = new Map(rows.map((r) => [r.name.toLowerCase(), r.id]));
  const ids = unique.map((name) => {
    const id = byName.get(name.toLowerCase());
    if (!id) throw new AppError("role_not_found", { detail: `Role '${name}' was not found.` });
    return id;
  });
  return [...new Set(ids)];
}

/** A key's role names (sorted) and every permission slug it holds, directly or through roles (sorted, unique). */
export function loadKeyAccess(db: Db, keyId: string): { roles: string[]; permissions: string[] } {
  const roleRows = db.select({ id: roles.id, name: roles.name }).from(keyRoles)
    .innerJoin(roles, eq(roles.id, keyRoles.roleId)).where(eq(keyRoles.keyId, keyId)).all();
  const direct = db.select({ slug: permissions.slug }).from(keyPermissions)
    .innerJoin(permissions, eq(permissions.id, keyPermissions.permissionId)).where(eq(keyPermissions.keyId, keyId)).all();
  const viaRoles = roleRows.length === 0 ? [] : db.select({ slug: permissions.slug }).from(rolePermissions)
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(inArray(rolePermissions.roleId, roleRows.map((r) => r.id))).all();
  const slugs = new Set([...direct, ...viaRoles].map((p) => p.slug));
  return { roles: roleRows.map((r) => r.name).sort(), permissions: [...slugs].sort() };
}
