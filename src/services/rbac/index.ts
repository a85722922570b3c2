/**
 * Permissions and roles of end-user keys. Permission names and slugs, and role names, are unique
 * per workspace compared case-insensitively. Permissions named on a key that do not exist yet are
 * created on the fly (name = slug); roles must exist before they are assigned.
 * The units here run in the caller's unit of work; RbacService (service.ts) is the permissions.* API.
 */
import type { Records } from "../../storage/records/index.ts";
import { step, type Work } from "../../storage/work.ts";
import { AppError } from "../../errors/app-error.ts";
import { lowerAscii } from "./views.ts";

export { ensurePermissionsIn, missingPermissionSlugsIn } from "./slugs.ts";
export { RbacService, type PermissionView, type RoleView, type RbacServiceDeps } from "./service.ts";

/**
 * Ids of the roles with these names (case-insensitive), unique, in request order (names differing
 * only in case name one role); 404 `role_not_found` for the first missing one.
 */
export function* findRoleIdsIn(records: Records, workspaceId: string, names: readonly string[]): Work<string[]> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return [];
  const rows = yield* step(records.rbac.rolesNamed(workspaceId, unique.map(lowerAscii)));
  const byName = new Map(rows.map((r) => [lowerAscii(r.name), r.id]));
  const ids = unique.map((name) => {
    const id = byName.get(lowerAscii(name));
    if (!id) throw new AppError("role_not_found", { detail: `Role '${name}' was not found.` });
    return id;
  });
  return [...new Set(ids)];
}

/** A key's role names (sorted) and every permission slug it holds, directly or through roles (sorted, unique). */
export function* loadKeyAccessIn(records: Records, keyId: string): Work<{ roles: string[]; permissions: string[] }> {
  const roleRows = yield* step(records.rbac.keyRoles(keyId));
  const direct = yield* step(records.rbac.keyPermissionSlugs(keyId));
  const viaRoles = yield* step(records.rbac.rolePermissionSlugs(roleRows.map((r) => r.id)));
  return { roles: roleRows.map((r) => r.name).sort(), permissions: [...new Set([...direct, ...viaRoles])].sort() };
}


