/**
 * RbacService: the permissions.* operations on a workspace's permissions and roles. Permission
 * names and slugs, and role names, are unique per workspace ignoring case. The holder of a name is
 * looked up before the insert, which tells a name clash from a slug clash on both backends (their
 * transactions keep what a unit read true until it commits); a duplicate only the unique index
 * notices (a concurrent create) is still the same 409. Permissions and roles are hard-deleted;
 * their links to roles and keys go with them (FK cascade).
 * `onAccessChanged` is called after such a delete, and after a role's permissions are replaced, so
 * that cached key access can be dropped.
 */
import { DuplicateRecord, type RecordBackend, type Records, type RoleRecord } from "../../storage/records/index.ts";
import { withinQuotas, type WorkspaceQuotas } from "../quotas/index.ts";
import { step, then, type Maybe, type Work } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { AppError } from "../../errors/app-error.ts";
import { writeAudit } from "../audit/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { DEFAULT_PAGE_BYTES } from "../pages/index.ts";
import { ensurePermissionsIn, missingPermissionSlugsIn } from "./slugs.ts";
import {
  findPermissionIn, findRoleIn, listPermissionPageIn, listRolePageIn, permissionClashIn, roleNameTakenIn, rolePermissionListIn,
  type ListInput, type Page, type PermissionView, type RoleView,
} from "./views.ts";

export type { ListInput, Page, PermissionView, RoleView } from "./views.ts";

export interface RbacServiceDeps {
  records: RecordBackend;
  clock: Clock;
  /** What a workspace may hold; DEFAULT_QUOTAS when left out. */
  quotas?: WorkspaceQuotas;
  /** Called after a committed change that can alter which permissions the workspace's keys hold. */
  onAccessChanged?: (workspaceId: string) => void;
  /** Bytes of items one list page may hold (TOLLGATE_LIST_PAGE_BYTES); 4 MiB when left out. */
  pageBytes?: number;
}

export interface CreatePermissionInput {
  name: string;
  slug: string;
  description?: string;
}

export interface CreateRoleInput {
  name: string;
  description?: string;
  /** Permission slugs; existing ones are reused, missing ones created. */
  permissions?: string[];
}

/** `attempt()`'s answer, or `recover(error)`'s when it throws or its promise rejects. */
function orElse<T>(attempt: () => Maybe<T>, recover: (error: unknown) => Maybe<T>): Maybe<T> {
  let answer: Maybe<T>;
  try {
    answer = attempt();
  } catch (error) {
    return recover(error);
  }
  return answer instanceof Promise ? answer.catch(recover) : answer;
}

const permissionExists = (field: "name" | "slug", value: string) =>
  new AppError("permission_already_exists", { detail: `A permission with ${field} '${value}' already exists in this workspace.` });

const roleExists = (name: string) =>
  new AppError("role_already_exists", { detail: `A role with name '${name}' already exists in this workspace.` });

/**
 * The role `ref` (id or name), locked for the rest of the unit: found, locked by id, and read again,
 * since a unit that held the lock before may have changed or deleted it.
 */
function* lockedRoleIn(r: Records, workspaceId: string, ref: string): Work<RoleRecord | undefined> {
  const found = yield* step(r.rbac.findRole(workspaceId, ref));
  if (!found) return undefined;
  yield r.locks.hold({ workspaceId, kind: "role", id: found.id });
  return yield* step(r.rbac.findRole(workspaceId, found.id));
}

/** The permission `ref` (id or slug), locked for the rest of the unit, as lockedRoleIn. */
function* lockedPermissionIn(r: Records, workspaceId: string, ref: string): Work<PermissionView | undefined> {
  const found = yield* findPermissionIn(r, workspaceId, ref);
  if (!found) return undefined;
  yield r.locks.hold({ workspaceId, kind: "permission", id: found.id });
  return yield* findPermissionIn(r, workspaceId, found.id);
}

const permissionNotFound = () => new AppError("permission_not_found", { detail: "The requested permission does not exist." });
const roleNotFound = () => new AppError("role_not_found", { detail: "The requested role does not exist." });

export class RbacService {
  constructor(private readonly deps: RbacServiceDeps) {}

  /** Creates a permission. 409 when its name or slug exists (ignoring case). Needs `rbac.*.create_permission`. */
  createPermission(principal: Principal, input: CreatePermissionInput): Maybe<{ permissionId: string }> {
    requirePermission(principal, "rbac", "*", "create_permission");
    const now = this.deps.clock.now();
    const ws = principal.workspaceId;
    const { records } = this.deps;
    const created = () => records.write(ws, withinQuotas(this.deps.quotas, ws, function* (r) {
      const clash = yield* permissionClashIn(r, ws, input.name, input.slug);
      if (clash) throw permissionExists(clash, clash === "name" ? input.name : input.slug);
      const permissionId = newId("perm");
      yield r.rbac.insertPermission({
        id: permissionId, workspaceId: ws, name: input.name, slug: input.slug, description: input.description ?? null, createdAt: now,
      });
      yield writeAudit(r, {
        workspaceId: ws, event: "permission.create", actor: principal.actor, timeMs: now,
        resources: [{ type: "permission", id: permissionId, name: input.name }], description: `Created permission ${input.slug}`,
      });
      return { permissionId };
    }));
    // A create that committed between the check and the insert: its row, read now, tells which of
    // the two clashed; when it is gone again, the name, checked first, is answered.
    return orElse(created, (error) => {
      if (!(error instanceof DuplicateRecord)) throw error;
      return then(records.read((r) => permissionClashIn(r, ws, input.name, input.slug)), (clash) => {
        if (clash === "slug") throw permissionExists("slug", input.slug);
        throw permissionExists("name", input.name);
      });
    });
  }

  /** A permission by id or slug; 404 when missing or of another workspace. Needs `rbac.*.read_permission`. */
  getPermission(principal: Principal, input: { permission: string }): Maybe<PermissionView> {
    requirePermission(principal, "rbac", "*", "read_permission");
    return this.deps.records.read(function* (r) {
      const found = yield* findPermissionIn(r, principal.workspaceId, input.permission);
      if (!found) throw permissionNotFound();
      return found;
    });
  }

  /** One page of permissions sorted by id (limit 1..100, default 100). Needs `rbac.*.read_permission`. */
  listPermissions(principal: Principal, input: ListInput): Maybe<Page<PermissionView>> {
    requirePermission(principal, "rbac", "*", "read_permission");
    return this.deps.records.read((r) => listPermissionPageIn(r, principal.workspaceId, input, this.deps.pageBytes ?? DEFAULT_PAGE_BYTES));
  }

  /** Deletes a permission by id or slug, and with it its links to roles and keys. Needs `rbac.*.delete_permission`. */
  deletePermission(principal: Principal, input: { permission: string }): Maybe<Record<string, never>> {
    requirePermission(principal, "rbac", "*", "delete_permission");
    const now = this.deps.clock.now();
    const ws = principal.workspaceId;
    const deleted = this.deps.records.write(ws, function* (r) {
      const found = yield* lockedPermissionIn(r, ws, input.permission);
      if (!found) throw permissionNotFound();
      yield r.rbac.deletePermission(found.id);
      yield writeAudit(r, {
        workspaceId: ws, event: "permission.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "permission", id: found.id, name: found.name }], description: `Deleted permission ${found.slug}`,
      });
    });
    return then(deleted, () => this.accessChanged(ws));
  }

  /**
   * Creates a role with the given permission slugs (missing ones are created). 409 when the name
   * exists (ignoring case). Needs `rbac.*.create_role`, plus `add_permission_to_role` when
   * `permissions` is non-empty and `create_permission` when one of them does not exist yet.
   */
  createRole(principal: Principal, input: CreateRoleInput): Maybe<{ roleId: string }> {
    requirePermission(principal, "rbac", "*", "create_role");
    const slugs = input.permissions ?? [];
    if (slugs.length > 0) requirePermission(principal, "rbac", "*", "add_permission_to_role");
    const now = this.deps.clock.now();
    const ws = principal.workspaceId;
    return this.deps.records.write(ws, withinQuotas(this.deps.quotas, ws, function* (r) {
      if ((yield* missingPermissionSlugsIn(r, ws, slugs)).length > 0) requirePermission(principal, "rbac", "*", "create_permission");
      if (yield* roleNameTakenIn(r, ws, input.name)) throw roleExists(input.name);
      const roleId = newId("role");
      try {
        yield r.rbac.insertRole({ id: roleId, workspaceId: ws, name: input.name, description: input.description ?? null, createdAt: now });
      } catch (error) {
        if (error instanceof DuplicateRecord) throw roleExists(input.name);
        throw error;
      }
      yield r.rbac.setRolePermissions(ws, roleId, yield* ensurePermissionsIn(r, ws, slugs, now), now);
      const perms = yield* rolePermissionListIn(r, roleId);
      yield writeAudit(r, {
        workspaceId: ws, event: "role.create", actor: principal.actor, timeMs: now,
        resources: [{ type: "role", id: roleId, name: input.name }, ...perms.map((p) => ({ type: "permission", id: p.id, name: p.slug }))],
        description: `Created role ${input.name}`,
      });
      return { roleId };
    }));
  }

  /**
   * Replaces a role's permissions with these slugs (`[]` removes all; missing ones are created) and
   * answers the role's permissions. Keys holding the role see the change at their next
   * verification. Needs `rbac.*.add_permission_to_role` and `rbac.*.remove_permission_from_role`,
   * and `create_permission` when a slug does not exist yet. 404 for an unknown role.
   */
  setRolePermissions(principal: Principal, input: { role: string; permissions: string[] }): Maybe<PermissionView[]> {
    requirePermission(principal, "rbac", "*", "add_permission_to_role");
    requirePermission(principal, "rbac", "*", "remove_permission_from_role");
    const now = this.deps.clock.now();
    const ws = principal.workspaceId;
    const result = this.deps.records.write(ws, withinQuotas(this.deps.quotas, ws, function* (r) {
      const found = yield* lockedRoleIn(r, ws, input.role);
      if (!found) throw roleNotFound();
      if ((yield* missingPermissionSlugsIn(r, ws, input.permissions)).length > 0) requirePermission(principal, "rbac", "*", "create_permission");
      yield r.rbac.setRolePermissions(ws, found.id, yield* ensurePermissionsIn(r, ws, input.permissions, now), now);
      yield r.rbac.markRoleUpdated(found.id, now);
      const perms = yield* rolePermissionListIn(r, found.id);
      yield writeAudit(r, {
        workspaceId: ws, event: "role.set_permissions", actor: principal.actor, timeMs: now,
        resources: [{ type: "role", id: found.id, name: found.name }, ...perms.map((p) => ({ type: "permission", id: p.id, name: p.slug }))],
        description: `Set the permissions of role ${found.name} to [${input.permissions.join(", ")}]`,
      });
      return perms;
    }));
    return then(result, (perms) => {
      this.accessChanged(ws);
      return perms;
    });
  }

  /** A role by id or name, with its permissions; 404 when missing or of another workspace. Needs `rbac.*.read_role`. */
  getRole(principal: Principal, input: { role: string }): Maybe<RoleView> {
    requirePermission(principal, "rbac", "*", "read_role");
    return this.deps.records.read(function* (r) {
      const found = yield* findRoleIn(r, principal.workspaceId, input.role);
      if (!found) throw roleNotFound();
      return found;
    });
  }

  /** One page of roles with their permissions, sorted by id (limit 1..100, default 100). Needs `rbac.*.read_role`. */
  listRoles(principal: Principal, input: ListInput): Maybe<Page<RoleView>> {
    requirePermission(principal, "rbac", "*", "read_role");
    return this.deps.records.read((r) => listRolePageIn(r, principal.workspaceId, input, this.deps.pageBytes ?? DEFAULT_PAGE_BYTES));
  }

  /** Deletes a role by id or name, and with it its links to permissions and keys. Needs `rbac.*.delete_role`. */
  deleteRole(principal: Principal, input: { role: string }): Maybe<Record<string, never>> {
    requirePermission(principal, "rbac", "*", "delete_role");
    const now = this.deps.clock.now();
    const ws = principal.workspaceId;
    const deleted = this.deps.records.write(ws, function* (r) {
      const found = yield* lockedRoleIn(r, ws, input.role);
      if (!found) throw roleNotFound();
      yield r.rbac.deleteRole(found.id);
      yield writeAudit(r, {
        workspaceId: ws, event: "role.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "role", id: found.id, name: found.name }], description: `Deleted role ${found.name}`,
      });
    });
    return then(deleted, () => this.accessChanged(ws));
  }

  /** Tells `onAccessChanged` of a committed change to the workspace's access; answers the deletes' `{}`. */
  private accessChanged(workspaceId: string): Record<string, never> {
    this.deps.onAccessChanged?.(workspaceId);
    return {};
  }
}
