/** The link tables of keys and roles: each setter replaces one owner's whole set, in the caller's transaction. */
import { eq } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { keyPermissions, keyRoles, rolePermissions } from "../../storage/schema/index.ts";

/** Replaces a key's direct permissions. */
export function setKeyPermissions(db: Db, workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): void {
  db.delete(keyPermissions).where(eq(keyPermissions.keyId, keyId)).run();
  if (permissionIds.length === 0) return;
  db.insert(keyPermissions).values(permissionIds.map((permissionId) => ({ keyId, permissionId, workspaceId, createdAt: nowMs }))).run();
}

/** Replaces a role's permissions. */
export function setRolePermissionIds(db: Db, workspaceId: string, roleId: string, permissionIds: readonly string[], nowMs: number): void {
  db.delete(rolePermissions).where(eq(rolePermissions.roleId, roleId)).run();
  if (permissionIds.length === 0) return;
  db.insert(rolePermissions).values(permissionIds.map((permissionId) => ({ roleId, permissionId, workspaceId, createdAt: nowMs }))).run();
}

/** Replaces a key's roles. */
export function setKeyRoles(db: Db, workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): void {
  db.delete(keyRoles).where(eq(keyRoles.keyId, keyId)).run();
  if (roleIds.length === 0) return;
  db.insert(keyRoles).values(roleIds.map((roleId) => ({ keyId, roleId, workspaceId, createdAt: nowMs }))).run();
}
