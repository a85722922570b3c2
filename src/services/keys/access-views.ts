/**
 * What the key permission and role routes answer: the key's direct permissions, and its roles with
 * their permissions, as upstream's `Permission` and `Role` (optional fields left out, never null).
 */
import type { LinkedPermission, Records } from "../../storage/records/index.ts";
import { step, type Work } from "../../storage/work.ts";
import { AppError } from "../../errors/app-error.ts";
import type { PermissionView, RoleView } from "../rbac/index.ts";

function toPermissionView(p: LinkedPermission): PermissionView {
  return { id: p.id, name: p.name, slug: p.slug, ...(p.description ? { description: p.description } : {}) };
}

/** The key's direct permissions (not those held through roles), by slug. */
export function* directPermissionViewsIn(records: Records, keyId: string): Work<PermissionView[]> {
  return (yield* step(records.keys.permissionsOf(keyId))).map(toPermissionView);
}

/** The key's roles by name, each with its permissions (by slug; left out when it has none). */
export function* keyRoleViewsIn(records: Records, keyId: string): Work<RoleView[]> {
  const rows = yield* step(records.keys.rolesOf(keyId));
  if (rows.length === 0) return [];
  const perms = yield* step(records.keys.permissionsOfRoles(rows.map((r) => r.id)));
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
export function* findPermissionIdsIn(records: Records, workspaceId: string, refs: readonly string[]): Work<string[]> {
  const ids: string[] = [];
  for (const ref of new Set(refs)) {
    const found = yield* step(records.keys.permissionIdByRef(workspaceId, ref));
    if (found === undefined) throw new AppError("permission_not_found", { detail: `Permission '${ref}' was not found.` });
    ids.push(found);
  }
  return [...new Set(ids)];
}
