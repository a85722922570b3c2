/**
 * RbacService: the permissions.* operations on a workspace's permissions and roles. Permission
 * names and slugs, and role names, are unique per workspace ignoring case; a duplicate is 409 even
 * when only the unique index notices it (a concurrent create from another process). Permissions and
 * roles are hard-deleted; their links to roles and keys go with them (FK cascade).
 * `onAccessChanged` is called after such a delete, and after a role's permissions are replaced, so
 * that cached key access can be dropped.
 */
import { eq } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";
import { permissions, roles } from "../../storage/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { AppError } from "../../errors/app-error.ts";
import { recordAudit } from "../audit/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { ensurePermissions, missingPermissionSlugs } from "./slugs.ts";
import { setRolePermissionIds } from "./links.ts";
import {
  findPermission, findPermissionConflict, findRole, findRoleRow, listPermissionPage, listRolePage, roleNameTaken, rolePermissionList,
  type ListInput, type Page, type PermissionView, type RoleView,
} from "./views.ts";

export type { ListInput, Page, PermissionView, RoleView } from "./views.ts";

export interface RbacServiceDeps {
  storage: Storage;
  clock: Clock;
  /** Called after a committed change that can alter which permissions the workspace's keys hold. */
  onAccessChanged?: (workspaceId: string) => void;
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

/** The message of the SQLite unique-constraint error in `error` or its causes, if any. */
function uniqueViolation(error: unknown): string | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ("code" in e && typeof e.code === "string" && e.code.startsWith("SQLITE_CONSTRAINT_UNIQUE")) return e.message;
  }
  return undefined;
}

const permissionExists = (field: "name" | "slug", value: string) =>
  new AppError("permission_already_exists", { detail: `A permission with ${field} '${value}' already exists in this workspace.` });

const roleExists = (name: string) =>
  new AppError("role_already_exists", { detail: `A role with name '${name}' already exists in this workspace.` });

const permissionNotFound = () => new AppError("permission_not_found", { detail: "The requested permission does not exist." });
const roleNotFound = () => new AppError("role_not_found", { detail: "The requested role does not exist." });

export class RbacService {
  constructor(private readonly deps: RbacServiceDeps) {}

  /** Creates a permission. 409 when its name or slug exists (ignoring case). Needs `rbac.*.create_permission`. */
  createPermission(principal: Principal, input: CreatePermissionInput): { permissionId: string } {
    requirePermission(principal, "rbac", "*", "create_permission");
    const now = this.deps.clock.now();
    const { db } = this.deps.storage;
    const ws = principal.workspaceId;
    try {
      return inTransaction(this.deps.storage, () => {
        const clash = findPermissionConflict(db, ws, input.name, input.slug);
        if (clash) throw permissionExists(clash, clash === "name" ? input.name : input.slug);
        const permissionId = newId("perm");
        db.insert(permissions).values({
          id: permissionId, workspaceId: ws, name: input.name, slug: input.slug, description: input.description ?? null, createdAt: now,
        }).run();
        recordAudit(db, {
          workspaceId: ws, event: "permission.create", actor: principal.actor, timeMs: now,
          resources: [{ type: "permission", id: permissionId, name: input.name }], description: `Created permission ${input.slug}`,
        });
        return { permissionId };
      });
    } catch (error) {
      const violated = uniqueViolation(error);
      if (violated?.includes("permissions_slug_uq")) throw permissionExists("slug", input.slug);
      if (violated?.includes("permissions_name_uq")) throw permissionExists("name", input.name);
      throw error;
    }
  }

  /** A permission by id or slug; 404 when missing or of another workspace. Needs `rbac.*.read_permission`. */
  getPermission(principal: Principal, input: { permission: string }): PermissionView {
    requirePermission(principal, "rbac", "*", "read_permission");
    const found = findPermission(this.deps.storage.db, principal.workspaceId, input.permission);
    if (!found) throw permissionNotFound();
    return found;
  }

  /** One page of permissions sorted by id (limit 1..100, default 100). Needs `rbac.*.read_permission`. */
  listPermissions(principal: Principal, input: ListInput): Page<PermissionView> {
    requirePermission(principal, "rbac", "*", "read_permission");
    return listPermissionPage(this.deps.storage.db, principal.workspaceId, input);
  }

  /** Deletes a permission by id or slug, and with it its links to roles and keys. Needs `rbac.*.delete_permission`. */
  deletePermission(principal: Principal, input: { permission: string }): Record<string, never> {
    requirePermission(principal, "rbac", "*", "delete_permission");
    const now = this.deps.clock.now();
    const { db } = this.deps.storage;
    inTransaction(this.deps.storage, () => {
      const found = findPermission(db, principal.workspaceId, input.permission);
      if (!found) throw permissionNotFound();
      db.delete(permissions).where(eq(permissions.id, found.id)).run();
      recordAudit(db, {
        workspaceId: principal.workspaceId, event: "permission.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "permission", id: found.id, name: found.name }], description: `Deleted permission ${found.slug}`,
      });
    });
    this.deps.onAccessChanged?.(principal.workspaceId);
    return {};
  }

  /**
   * Creates a role with the given permission slugs (missing ones are created). 409 when the name
   * exists (ignoring case). Needs `rbac.*.create_role`, plus `add_permission_to_role` when
   * `permissions` is non-empty and `create_permission` when one of them does not exist yet.
   */
  createRole(principal: Principal, input: CreateRoleInput): { roleId: string } {
    requirePermission(principal, "rbac", "*", "create_role");
    const slugs = input.permissions ?? [];
    if (slugs.length > 0) requirePermission(principal, "rbac", "*", "add_permission_to_role");
    try {
      return inTransaction(this.deps.storage, () => this.insertRole(principal, input, slugs));
    } catch (error) {
      if (uniqueViolation(error)?.includes("roles_name_uq")) throw roleExists(input.name);
      throw error;
    }
  }

  /** createRole's transaction body. */
  private insertRole(principal: Principal, input: CreateRoleInput, slugs: string[]): { roleId: string } {
    const now = this.deps.clock.now();
    const { db } = this.deps.storage;
    const ws = principal.workspaceId;
    if (missingPermissionSlugs(db, ws, slugs).length > 0) requirePermission(principal, "rbac", "*", "create_permission");
    if (roleNameTaken(db, ws, input.name)) throw roleExists(input.name);
    const roleId = newId("role");
    db.insert(roles).values({ id: roleId, workspaceId: ws, name: input.name, description: input.description ?? null, createdAt: now }).run();
    setRolePermissionIds(db, ws, roleId, ensurePermissions(db, ws, slugs, now), now);
    recordAudit(db, {
      workspaceId: ws, event: "role.create", actor: principal.actor, timeMs: now,
      resources: [{ type: "role", id: roleId, name: input.name }, ...rolePermissionList(db, roleId).map((p) => ({ type: "permission", id: p.id, name: p.slug }))],
      description: `Created role ${input.name}`,
    });
    return { roleId };
  }

  /**
   * Replaces a role's permissions with these slugs (`[]` removes all; missing ones are created) and
   * answers the role's permissions. Keys holding the role see the change at their next
   * verification. Needs `rbac.*.add_permission_to_role` and `rbac.*.remove_permission_from_role`,
   * and `create_permission` when a slug does not exist yet. 404 for an unknown role.
   */
  setRolePermissions(principal: Principal, input: { role: string; permissions: string[] }): PermissionView[] {
    requirePermission(principal, "rbac", "*", "add_permission_to_role");
    requirePermission(principal, "rbac", "*", "remove_permission_from_role");
    const now = this.deps.clock.now();
    const { db } = this.deps.storage;
    const ws = principal.workspaceId;
    const result = inTransaction(this.deps.storage, () => {
      const found = findRoleRow(db, ws, input.role);
      if (!found) throw roleNotFound();
      if (missingPermissionSlugs(db, ws, input.permissions).length > 0) requirePermission(principal, "rbac", "*", "create_permission");
      setRolePermissionIds(db, ws, found.id, ensurePermissions(db, ws, input.permissions, now), now);
      db.update(roles).set({ updatedAt: now }).where(eq(roles.id, found.id)).run();
      const perms = rolePermissionList(db, found.id);
      recordAudit(db, {
        workspaceId: ws, event: "role.set_permissions", actor: principal.actor, timeMs: now,
        resources: [{ type: "role", id: found.id, name: found.name }, ...perms.map((p) => ({ type: "permission", id: p.id, name: p.slug }))],
        description: `Set the permissions of role ${found.name} to [${input.permissions.join(", ")}]`,
      });
      return perms;
    });
    this.deps.onAccessChanged?.(principal.workspaceId);
    return result;
  }

  /** A role by id or name, with its permissions; 404 when missing or of another workspace. Needs `rbac.*.read_role`. */
  getRole(principal: Principal, input: { role: string }): RoleView {
    requirePermission(principal, "rbac", "*", "read_role");
    const found = findRole(this.deps.storage.db, principal.workspaceId, input.role);
    if (!found) throw roleNotFound();
    return found;
  }

  /** One page of roles with their permissions, sorted by id (limit 1..100, default 100). Needs `rbac.*.read_role`. */
  listRoles(principal: Principal, input: ListInput): Page<RoleView> {
    requirePermission(principal, "rbac", "*", "read_role");
    return listRolePage(this.deps.storage.db, principal.workspaceId, input);
  }

  /** Deletes a role by id or name, and with it its links to permissions and keys. Needs `rbac.*.delete_role`. */
  deleteRole(principal: Principal, input: { role: string }): Record<string, never> {
    requirePermission(principal, "rbac", "*", "delete_role");
    const now = this.deps.clock.now();
    const { db } = this.deps.storage;
    inTransaction(this.deps.storage, () => {
      const found = findRoleRow(db, principal.workspaceId, input.role);
      if (!found) throw roleNotFound();
      db.delete(roles).where(eq(roles.id, found.id)).run();
      recordAudit(db, {
        workspaceId: principal.workspaceId, event: "role.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "role", id: found.id, name: found.name }], description: `Deleted role ${found.name}`,
      });
    });
    this.deps.onAccessChanged?.(principal.workspaceId);
    return {};
  }
}
