/**
 * Locks a unit of work takes on the record it is about to change, so that two units changing the
 * same record run one after the other, each reading what the other committed. The embedded backend
 * writes one unit at a time, so its locks are no-ops; the cluster's (pg/records/locks.ts) are
 * PostgreSQL advisory locks held to the transaction's end, which is what lets its units run at
 * READ COMMITTED instead of SERIALIZABLE: only units touching the same record wait for each other.
 * Why advisory locks rather than SELECT … FOR UPDATE: a unit names its target by id before it reads
 * it (or reads, locks the id, and reads again), and one method covers every kind of record.
 */

/** What a lock is taken on: a kind of record and its id (ids are unique within a workspace). */
export interface LockTarget {
  workspaceId: string;
  kind: "key" | "role" | "permission" | "identity" | "override" | "api" | "rootKey" | "workspace";
  id: string;
}

export interface RecordLocks {
  /**
   * Holds an exclusive lock on `target` until the unit's transaction ends; waits while another unit
   * holds it. Take it before reading what the unit's writes depend on.
   */
  hold(target: LockTarget): void | Promise<void>;
}

/** The embedded backend's: one unit runs at a time, so there is nothing to wait for. */
export class SqliteRecordLocks implements RecordLocks {
  hold(_target: LockTarget): void {}
}
