/**
 * The link tables of keys, for callers not yet on the record stores (the stores' own setters:
 * records.rbac.setKeyPermissions, setKeyRoles). Each replaces one key's whole set, in the caller's
 * transaction.
 */
import type { Db } from "../../storage/db.ts";
import { SqliteRbacStore } from "../../storage/records/index.ts";

/** Replaces a key's direct permissions. */
export function setKeyPermissions(db: Db, workspaceId: string, keyId: string, permissionIds: readonly string[], nowMs: number): void {
  new SqliteRbacStore(db).setKeyPermissions(workspaceId, keyId, permissionIds, nowMs);
}

/** Replaces a key's roles. */
export function setKeyRoles(db: Db, workspaceId: string, keyId: string, roleIds: readonly string[], nowMs: number): void {
  new SqliteRbacStore(db).setKeyRoles(workspaceId, keyId, roleIds, nowMs);
}
