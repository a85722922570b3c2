/**
 * A key's direct permissions and roles: keys.add/remove/setPermissions and keys.add/remove/setRoles.
 * Every call needs `update_key` on the key's API, plus the `rbac.*` grants of grants.ts (upstream's
 * table, and for setRoles and removeRoles the role grants as well). Permissions are named by slug
 * (remove also takes ids); slugs that do not exist are created, which needs `rbac.*.create_permission`.
 * Roles are named by name and must exist.
 * Add and remove are idempotent. Each call answers the key's set afterwards.
 */
import { and, eq, inArray } from "drizzle-orm";
import { keyPermissions, keyRoles } from "../../storage/schema/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { findRoleIds, setKeyPermissions, setKeyRoles, type PermissionView, type RoleView } from "../rbac/index.ts";
import type { KeyDeps } from "./create.ts";
import { directPermissionViews, findPermissionIds, keyRoleViews } from "./access-views.ts";
import { ACCESS_GRANTS, permissionIdsFor, requireRbac } from "./grants.ts";
import { KEY_NOT_FOUND, mutateKey, type KeyTarget } from "./target.ts";

export interface KeyPermissionsInput {
  keyId: string;
  /** Permission slugs (removePermissions also takes permission ids). */
  permissions: string[];
}

export interface KeyRolesInput {
  keyId: string;
  /** Role names. */
  roles: string[];
}

/** `update_key` on the key's API, then each `rbac.*.<action>`; 403 naming the first one missing. */
function authorizer(principal: Principal, rbacActions: readonly string[]): (target: KeyTarget) => void {
  return (target) => {
    requirePermission(principal, "api", target.api.id, "update_key");
    requireRbac(principal, rbacActions);
  };
}

const list = (items: readonly string[]) => items.join(", ");

/** Adds direct permissions; answers all of the key's direct permissions. */
export function addPermissions(deps: KeyDeps, principal: Principal, input: KeyPermissionsInput): PermissionView[] {
  const { db } = deps.storage;
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.add_permissions",
    authorize: authorizer(principal, ACCESS_GRANTS.addPermissions),
    apply: (t, now) => {
      const rows = permissionIdsFor(db, principal, input.permissions, now)
        .map((permissionId) => ({ keyId: t.row.id, permissionId, workspaceId: t.row.workspaceId, createdAt: now }));
      if (rows.length > 0) db.insert(keyPermissions).values(rows).onConflictDoNothing().run();
      return directPermissionViews(db, t.row.id);
    },
    describe: (t) => `Added permissions ${list(input.permissions)} to key ${t.row.id}`,
  });
}

/** Removes direct permissions (by slug or id; 404 for one that does not exist); answers those left. */
export function removePermissions(deps: KeyDeps, principal: Principal, input: KeyPermissionsInput): PermissionView[] {
  const { db } = deps.storage;
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.remove_permissions",
    authorize: authorizer(principal, ACCESS_GRANTS.removePermissions),
    apply: (t) => {
      const ids = findPermissionIds(db, principal.workspaceId, input.permissions);
      db.delete(keyPermissions).where(and(eq(keyPermissions.keyId, t.row.id), inArray(keyPermissions.permissionId, ids))).run();
      return directPermissionViews(db, t.row.id);
    },
    describe: (t) => `Removed permissions ${list(input.permissions)} from key ${t.row.id}`,
  });
}

/** Replaces the direct permissions (`[]` clears them); answers the new set. */
export function setPermissions(deps: KeyDeps, principal: Principal, input: KeyPermissionsInput): PermissionView[] {
  const { db } = deps.storage;
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.set_permissions",
    authorize: authorizer(principal, ACCESS_GRANTS.setPermissions),
    apply: (t, now) => {
      setKeyPermissions(db, t.row.workspaceId, t.row.id, permissionIdsFor(db, principal, input.permissions, now), now);
      return directPermissionViews(db, t.row.id);
    },
    describe: (t) => `Set the permissions of key ${t.row.id} to [${list(input.permissions)}]`,
  });
}

/** Adds roles (404 `role_not_found` for an unknown name; nothing changes then); answers all of the key's roles. */
export function addRoles(deps: KeyDeps, principal: Principal, input: KeyRolesInput): RoleView[] {
  const { db } = deps.storage;
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.add_roles",
    authorize: authorizer(principal, ACCESS_GRANTS.addRoles),
    apply: (t, now) => {
      const rows = findRoleIds(db, principal.workspaceId, input.roles)
        .map((roleId) => ({ keyId: t.row.id, roleId, workspaceId: t.row.workspaceId, createdAt: now }));
      if (rows.length > 0) db.insert(keyRoles).values(rows).onConflictDoNothing().run();
      return keyRoleViews(db, t.row.id);
    },
    describe: (t) => `Added roles ${list(input.roles)} to key ${t.row.id}`,
  });
}

/** Removes roles (each must exist); answers the roles left. */
export function removeRoles(deps: KeyDeps, principal: Principal, input: KeyRolesInput): RoleView[] {
  const { db } = deps.storage;
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.remove_roles",
    authorize: authorizer(principal, ACCESS_GRANTS.removeRoles),
    apply: (t) => {
      const ids = findRoleIds(db, principal.workspaceId, input.roles);
      db.delete(keyRoles).where(and(eq(keyRoles.keyId, t.row.id), inArray(keyRoles.roleId, ids))).run();
      return keyRoleViews(db, t.row.id);
    },
    describe: (t) => `Removed roles ${list(input.roles)} from key ${t.row.id}`,
  });
}

/** Replaces the roles (`[]` removes all); answers the new set. */
export function setRoles(deps: KeyDeps, principal: Principal, input: KeyRolesInput): RoleView[] {
  const { db } = deps.storage;
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.set_roles",
    authorize: authorizer(principal, ACCESS_GRANTS.setRoles),
    apply: (t, now) => {
      setKeyRoles(db, t.row.workspaceId, t.row.id, findRoleIds(db, principal.workspaceId, input.roles), now);
      return keyRoleViews(db, t.row.id);
    },
    describe: (t) => `Set the roles of key ${t.row.id} to [${list(input.roles)}]`,
  });
}
