/**
 * The `rbac.*` grants a root key needs to change which permissions and roles a key holds. Every way
 * to do it asks the same: the dedicated routes (keys.add/remove/setPermissions and Roles), the
 * `permissions` and `roles` fields of createKey and updateKey, and the copy rerollKey makes; so no
 * field grants what a dedicated route guards (DECISIONS, "Authentication and authorization").
 * Upstream asks only `update_key` for setRoles and removeRoles; here they ask the rbac grants too,
 * or setRoles would hand out any role that addRoles refuses.
 */
import type { Records } from "../../storage/records/index.ts";
import type { Work } from "../../storage/work.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { ensurePermissionsIn, missingPermissionSlugsIn } from "../rbac/index.ts";

/** The `rbac.*.<action>`s each kind of change needs: adding, removing, or replacing the whole set. */
export const ACCESS_GRANTS = {
  addPermissions: ["add_permission_to_key"],
  removePermissions: ["remove_permission_from_key"],
  setPermissions: ["add_permission_to_key", "remove_permission_from_key"],
  addRoles: ["add_role_to_key"],
  removeRoles: ["remove_role_from_key"],
  setRoles: ["add_role_to_key", "remove_role_from_key"],
} as const satisfies Record<string, readonly string[]>;

/** Throws 403 `insufficient_permissions` naming the first `rbac.*.<action>` the principal lacks. */
export function requireRbac(principal: Principal, actions: readonly string[]): void {
  for (const action of actions) requirePermission(principal, "rbac", "*", action);
}

/**
 * Ids of the permissions with these slugs, creating the missing ones; creating needs
 * `rbac.*.create_permission` (403 before anything is written). Runs in the caller's unit.
 */
export function* permissionIdsForIn(records: Records, principal: Principal, slugs: readonly string[], nowMs: number): Work<string[]> {
  if ((yield* missingPermissionSlugsIn(records, principal.workspaceId, slugs)).length > 0) requirePermission(principal, "rbac", "*", "create_permission");
  return yield* ensurePermissionsIn(records, principal.workspaceId, slugs, nowMs);
}
