/**
 * A key's direct permissions and roles: keys.add/remove/setPermissions and keys.add/remove/setRoles.
 * Every call needs `update_key` on the key's API, plus the `rbac.*` grants of grants.ts (upstream's
 * table, and for setRoles and removeRoles the role grants as well). Permissions are named by slug
 * (remove also takes ids); slugs that do not exist are created, which needs `rbac.*.create_permission`.
 * Roles are named by name and must exist.
 * Add and remove are idempotent. Each call answers the key's set afterwards.
 */
import type { Records } from "../../storage/records/index.ts";
import type { Maybe, Work } from "../../storage/work.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { findRoleIdsIn, type PermissionView, type RoleView } from "../rbac/index.ts";
import type { KeyDeps } from "./create.ts";
import { directPermissionViewsIn, findPermissionIdsIn, keyRoleViewsIn } from "./access-views.ts";
import { ACCESS_GRANTS, permissionIdsForIn, requireRbac } from "./grants.ts";
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
function authorizer(principal: Principal, rbacActions: readonly string[]): (target: KeyTarget, records: Records) => Work<void> {
  return function* (target) {
    requirePermission(principal, "api", target.api.id, "update_key");
    requireRbac(principal, rbacActions);
  };
}

const list = (items: readonly string[]) => items.join(", ");

/** Adds direct permissions; answers all of the key's direct permissions. */
export function addPermissions(deps: KeyDeps, principal: Principal, input: KeyPermissionsInput): Maybe<PermissionView[]> {
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.add_permissions",
    grows: true,
    authorize: authorizer(principal, ACCESS_GRANTS.addPermissions),
    *apply(t, now, r) {
      const ids = yield* permissionIdsForIn(r, principal, input.permissions, now);
      yield r.keys.addPermissions(t.row.workspaceId, t.row.id, ids, now);
      return yield* directPermissionViewsIn(r, t.row.id);
    },
    describe: (t) => `Added permissions ${list(input.permissions)} to key ${t.row.id}`,
  });
}

/** Removes direct permissions (by slug or id; 404 for one that does not exist); answers those left. */
export function removePermissions(deps: KeyDeps, principal: Principal, input: KeyPermissionsInput): Maybe<PermissionView[]> {
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.remove_permissions",
    authorize: authorizer(principal, ACCESS_GRANTS.removePermissions),
    *apply(t, _now, r) {
      const ids = yield* findPermissionIdsIn(r, principal.workspaceId, input.permissions);
      yield r.keys.removePermissions(t.row.id, ids);
      return yield* directPermissionViewsIn(r, t.row.id);
    },
    describe: (t) => `Removed permissions ${list(input.permissions)} from key ${t.row.id}`,
  });
}

/** Replaces the direct permissions (`[]` clears them); answers the new set. */
export function setPermissions(deps: KeyDeps, principal: Principal, input: KeyPermissionsInput): Maybe<PermissionView[]> {
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.set_permissions",
    grows: true,
    authorize: authorizer(principal, ACCESS_GRANTS.setPermissions),
    *apply(t, now, r) {
      const ids = yield* permissionIdsForIn(r, principal, input.permissions, now);
      yield r.rbac.setKeyPermissions(t.row.workspaceId, t.row.id, ids, now);
      return yield* directPermissionViewsIn(r, t.row.id);
    },
    describe: (t) => `Set the permissions of key ${t.row.id} to [${list(input.permissions)}]`,
  });
}

/** Adds roles (404 `role_not_found` for an unknown name; nothing changes then); answers all of the key's roles. */
export function addRoles(deps: KeyDeps, principal: Principal, input: KeyRolesInput): Maybe<RoleView[]> {
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.add_roles",
    grows: true,
    authorize: authorizer(principal, ACCESS_GRANTS.addRoles),
    *apply(t, now, r) {
      const ids = yield* findRoleIdsIn(r, principal.workspaceId, input.roles);
      yield r.keys.addRoles(t.row.workspaceId, t.row.id, ids, now);
      return yield* keyRoleViewsIn(r, t.row.id);
    },
    describe: (t) => `Added roles ${list(input.roles)} to key ${t.row.id}`,
  });
}

/** Removes roles (each must exist); answers the roles left. */
export function removeRoles(deps: KeyDeps, principal: Principal, input: KeyRolesInput): Maybe<RoleView[]> {
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.remove_roles",
    authorize: authorizer(principal, ACCESS_GRANTS.removeRoles),
    *apply(t, _now, r) {
      const ids = yield* findRoleIdsIn(r, principal.workspaceId, input.roles);
      yield r.keys.removeRoles(t.row.id, ids);
      return yield* keyRoleViewsIn(r, t.row.id);
    },
    describe: (t) => `Removed roles ${list(input.roles)} from key ${t.row.id}`,
  });
}

/** Replaces the roles (`[]` removes all); answers the new set. */
export function setRoles(deps: KeyDeps, principal: Principal, input: KeyRolesInput): Maybe<RoleView[]> {
  return mutateKey(deps, principal, input.keyId, {
    missingDetail: KEY_NOT_FOUND,
    event: "key.set_roles",
    grows: true,
    authorize: authorizer(principal, ACCESS_GRANTS.setRoles),
    *apply(t, now, r) {
      const ids = yield* findRoleIdsIn(r, principal.workspaceId, input.roles);
      yield r.rbac.setKeyRoles(t.row.workspaceId, t.row.id, ids, now);
      return yield* keyRoleViewsIn(r, t.row.id);
    },
    describe: (t) => `Set the roles of key ${t.row.id} to [${list(input.roles)}]`,
  });
}
