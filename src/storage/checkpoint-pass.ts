/**
 * One pass of the checkpointer (see checkpointer.ts), on a connection of its own. A PASSIVE
 * checkpoint copies the WAL's frames into the database file without waiting for anyone, but it
 * never restarts the WAL: SQLite restarts it only when a writer begins right after a checkpoint
 * that copied every frame, while no other connection is reading from the WAL. Under sustained
 * writes (credit spends into tollgate.db, the event writer into analytics.db: each file has a
 * checkpointer of its own) with reads overlapping them, that moment rarely comes, and the WAL grows
 * by every commit without end, its index (-shm, mapped into memory) with it. So once the WAL holds
 * `restartAtFrames` frames, the pass follows with a RESTART checkpoint: it takes the write lock,
 * copies the few frames written since the passive one, waits for the readers still on the WAL (new
 * ones read the database file), and makes the next writer start the WAL again from its beginning,
 * reusing the file (which that writer cuts back to its journal_size_limit). Not TRUNCATE: emptying
 * the file too held writers up for its syncs and made them extend the file again, page after page,
 * which under load raised the p99 of verifications with a credit spend far more than RESTART does.
 * The connection's busy_timeout bounds how long it waits for the lock and for those readers, and so,
 * with that copy, how long a writer can be held up; when it runs out, the WAL stays as it is and the
 * next pass tries again.
 */
import type { Database } from "bun:sqlite";
import type { CheckpointResult } from "./db.ts";

export interface CheckpointOptions {
  /** Milliseconds between passes. */
  intervalMs: number;
  /** Frames in the WAL from which a pass restarts it; Infinity never does. */
  restartAtFrames: number;
  /** The checkpointer connection's busy_timeout: the longest a restart waits for the write lock, then for readers. */
  restartBusyTimeoutMs: number;
}

/**
 * A PASSIVE checkpoint, then a RESTART one when the WAL holds `restartAtFrames` frames or more;
 * returns the outcome of the last (`busy` 0 when it completed).
 */
export function checkpointPass(db: Database, restartAtFrames: number): CheckpointResult {
  const failed: CheckpointResult = { busy: 1, log: -1, checkpointed: -1 };
  const passive = db.query<CheckpointResult, []>("PRAGMA wal_checkpoint(PASSIVE)").get() ?? failed;
  if (passive.log < restartAtFrames) return passive;
  return db.query<CheckpointResult, []>("PRAGMA wal_checkpoint(RESTART)").get() ?? failed;
}
