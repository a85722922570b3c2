/**
 * What the key permission and role routes answer: the key's direct permissions, and its roles with
 * their permissions, as upstream's `Permission` and `Role` (optional fields left out, never null).
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { keyPermissions, keyRoles, permissions, rolePermissions, roles } from "../../storage/schema/index.ts";
import { AppError } from "../../errors/app-error.ts";
import type { PermissionView, RoleView } from "../rbac/index.ts";

const permissionColumns = { id: permissions.id, name: permissions.name, slug: permissions.slug, description: permissions.description };

function toPermissionView(p: { id: string; name: string; slug: string; description: string | null }): PermissionView {
  return { id: p.id, name: p.name, slug: p.slug, ...(p.description ? { description: p.description } : {}) };
}

/** The key's direct permissions (not those held through roles), by slug. */
export function directPermissionViews(db: Db, keyId: string): PermissionView[] {
  return db.select(permissionColumns).from(keyPermissions)
    .innerJoin(permissions, eq(permissions.id, keyPermissions.permissionId))
    .where(eq(keyPermissions.keyId, keyId)).orderBy(asc(permissions.slug)).all().map(toPermissionView);
}

/** The key's roles by name, each with its permissions (by slug; left out when it has none). */
export function keyRoleViews(db: Db, keyId: string): RoleView[] {
  const rows = db.select({ id: roles.id, name: roles.name, description: roles.description }).from(keyRoles)
    .innerJoin(roles, eq(roles.id, keyRoles.roleId)).where(eq(keyRoles.keyId, keyId)).orderBy(asc(roles.name)).all();
  if (rows.length === 0) return [];
  const perms = db.select({ roleId: rolePermissions.roleId, ...permissionColumns }).from(rolePermissions)
    .innerJoin(permissions, eq(permissions.id, rolePermissions.permissionId))
    .where(inArray(rolePermissions.roleId, rows.map((r) => r.id))).orderBy(asc(permissions.slug)).all();
  return rows.map((r) => {
    const own = perms.filter((p) => p.roleId === r.id).map(toPermissionView);
    return {
      id: r.id,
      name: r.name,
      ...(r.description ? { description: r.description } : {}),
      ...(own.length > 0 ? { permissions: own } : {}),
    };
  });
}

/**
 * Ids of the permissions named by id or slug (slugs compared ignoring case), in request order
 * without duplicates. 404 `permission_not_found` for the first one that does not exist.
 */
export function findPermissionIds(db: Db, workspaceId: string, refs: readonly string[]): string[] {
  const ids = [...new Set(refs)].map((ref) => {
    const found = db.select({ id: permissions.id }).from(permissions)
      .where(and(eq(permissions.workspaceId, workspaceId), sql`(${permissions.id} = ${ref} or lower(${permissions.slug}) = lower(${ref}))`))
      .orderBy(sql`${permissions.id} = ${ref} desc`).limit(1).get();
    if (!found) throw new AppError("permission_not_found", { detail: `Permission '${ref}' was not found.` });
    return found.id;
  });
  return [...new Set(ids)];
}
