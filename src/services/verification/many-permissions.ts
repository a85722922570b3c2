/**
 * The cold load of a key that holds many permissions (embedded mode): read one slice at a time, a
 * turn of the event loop each (its direct permissions, then each role's), merged and indexed as
 * they come. The one statement that gathers small sets took a quarter of a second for 100 roles of
 * 1,000 permissions, and held the loop for all of it.
 *
 * The slices are read on a read-only connection of their own inside one read transaction: in WAL
 * mode every slice then sees the same committed state, the one of the load's first read (made in
 * the same turn as the key's own row), while this process goes on writing on its connection. The
 * set is therefore exact as of that moment; a change committed during the load is caught by the
 * key cache's drop count, which keeps such a snapshot out of the cache (VerificationService).
 */
import { Database } from "bun:sqlite";
import { BUSY_TIMEOUT_MS } from "../../storage/db.ts";
import { HeldBuilder } from "./permission-query.ts";
import { nextTurn, permissionSet, SortedRuns, type PermissionSet } from "./permission-set.ts";

/** Keys holding more than this many permission rows (direct + through roles, duplicates counted) are loaded in slices. */
export const SLICED_LOAD_MIN_ROWS = 2000;

const DIRECT_SQL = `SELECT json_group_array(slug) AS slugs FROM (
  SELECT p.slug FROM key_permissions kp JOIN permissions p ON p.id = kp.permission_id WHERE kp.key_id = ?1 ORDER BY 1)`;
const ROLES_SQL = "SELECT role_id FROM key_roles WHERE key_id = ?1 ORDER BY role_id";
const ROLE_SQL = `SELECT json_group_array(slug) AS slugs FROM (
  SELECT p.slug FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id WHERE rp.role_id = ?1 ORDER BY 1)`;

/**
 * Starts the load of key `keyId`'s permission set from the database file at `path`: the first
 * read happens before this returns (so in the caller's turn), the rest in later turns.
 */
export function loadManyPermissions(path: string, keyId: string): Promise<PermissionSet> {
  const db = new Database(path, { readonly: true });
  let direct: string[];
  let roleIds: string[];
  try {
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.run("BEGIN");
    direct = slugsOf(db, DIRECT_SQL, keyId);
    roleIds = db.query<{ role_id: string }, [string]>(ROLES_SQL).all(keyId).map((r) => r.role_id);
  } catch (error) {
    db.close();
    return Promise.reject(error);
  }
  return sliced(db, direct, roleIds).finally(() => {
    db.run("COMMIT");
    db.close();
  });
}

async function sliced(db: Database, direct: string[], roleIds: readonly string[]): Promise<PermissionSet> {
  const runs = new SortedRuns();
  const held = new HeldBuilder();
  runs.push(direct);
  held.add(direct);
  for (const roleId of roleIds) {
    await nextTurn();
    const slugs = slugsOf(db, ROLE_SQL, roleId);
    runs.push(slugs);
    held.add(slugs);
  }
  do await nextTurn();
  while (runs.mergeTop());
  const permissions = runs.result;
  return permissionSet(permissions, JSON.stringify(permissions), held.build());
}

function slugsOf(db: Database, sql: string, id: string): string[] {
  const row = db.query<{ slugs: string }, [string]>(sql).get(id);
  return row === null ? [] : (JSON.parse(row.slugs) as string[]);
}
