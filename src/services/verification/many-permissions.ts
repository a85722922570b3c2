/**
 * The cold load of a key that holds many permissions (embedded mode): read one slice at a time, a
 * turn of the event loop each (its direct permissions, then each role's), merged and indexed as
 * they come. The one statement that gathers small sets took a quarter of a second for 100 roles of
 * 1,000 permissions, and held the loop for all of it.
 *
 * The key's row and the slices are read on a read-only connection of their own inside one read
 * transaction: in WAL mode every read then sees the same committed state, the one of the row's
 * read, while this process goes on writing on its connection. The snapshot is therefore exact as
 * of that moment; a change committed during the load is caught by the key cache's drop count,
 * which keeps such a snapshot out of the cache (VerificationService). Loads run a few at a time
 * (`TOLLGATE_KEY_SLICED_LOADS`): each holds a connection with its own page cache.
 */
import { Database } from "bun:sqlite";
import { BUSY_TIMEOUT_MS } from "../../storage/db.ts";
import { HeldBuilder } from "./permission-query.ts";
import { nextTurn, permissionSet, SortedRuns, type PermissionSet } from "./permission-set.ts";

/** Keys holding at least this many permission rows (direct + through roles, duplicates counted) are loaded in slices. */
export const SLICED_LOAD_MIN_ROWS = 2000;

const DIRECT_SQL = `SELECT json_group_array(slug) AS slugs FROM (
  SELECT p.slug FROM key_permissions kp JOIN permissions p ON p.id = kp.permission_id WHERE kp.key_id = ?1 ORDER BY 1)`;
const ROLES_SQL = "SELECT role_id FROM key_roles WHERE key_id = ?1 ORDER BY role_id";
const ROLE_SQL = `SELECT json_group_array(slug) AS slugs FROM (
  SELECT p.slug FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id WHERE rp.role_id = ?1 ORDER BY 1)`;

/** A row read inside the load's transaction, with the set when the row has none (null: no such key any more). */
export interface LoadedInSlices<Row> {
  row: Row;
  many?: PermissionSet;
}

/**
 * The loads in slices of one database file, at most `maxConcurrent` at a time (each holds a
 * connection, its page cache and a file descriptor); the others wait their turn in order.
 */
export class ManyPermissionLoads {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly path: string, private readonly maxConcurrent: number) {}

  /**
   * Reads the key's row with `readRow` and, when the row has no permission list (`keyIdOf` gives
   * its key id, undefined when it has one), the key's set in slices, all in one read transaction.
   */
  async load<Row>(readRow: (db: Database) => Row | null, keyIdOf: (row: Row) => string | undefined): Promise<LoadedInSlices<Row> | null> {
    if (this.running >= this.maxConcurrent) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await this.inTransaction(readRow, keyIdOf);
    } finally {
      // The slot passes to the next waiting load, if any, without being given up.
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running--;
    }
  }

  private async inTransaction<Row>(readRow: (db: Database) => Row | null, keyIdOf: (row: Row) => string | undefined): Promise<LoadedInSlices<Row> | null> {
    const db = new Database(this.path, { readonly: true });
    try {
      db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.run("BEGIN");
      const row = readRow(db);
      const keyId = row === null ? undefined : keyIdOf(row);
      if (row === null || keyId === undefined) return row === null ? null : { row };
      return { row, many: await sliced(db, keyId) };
    } finally {
      if (db.inTransaction) db.run("COMMIT");
      db.close();
    }
  }
}

async function sliced(db: Database, keyId: string): Promise<PermissionSet> {
  const direct = slugsOf(db, DIRECT_SQL, keyId);
  const roleIds = db.query<{ role_id: string }, [string]>(ROLES_SQL).all(keyId).map((r) => r.role_id);
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
