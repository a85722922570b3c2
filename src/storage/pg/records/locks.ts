/**
 * The cluster's record locks (storage/records/locks.ts): transaction-level advisory locks on a hash
 * of the target, released by the commit or rollback. Hashes of different targets may collide, which
 * only makes two unrelated units wait for each other. The one-key (int8) form is used; the two-key
 * (int4, int4) form, a separate lock space, is left to locks taken per (workspace, resource).
 */
import { sql } from "drizzle-orm";
import type { PgDb } from "../db.ts";
import type { LockTarget, RecordLocks } from "../../records/locks.ts";

export class PgRecordLocks implements RecordLocks {
  constructor(private readonly db: PgDb) {}

  async hold(target: LockTarget): Promise<void> {
    const name = `${target.workspaceId}/${target.kind}/${target.id}`;
    await this.db.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`);
  }
}
