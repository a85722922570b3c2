/**
 * Folding minute rollups into the hour, day and month rollups, a minute or so after the event
 * writer upserted the minute rows, in slices: a key's coarser rows are written about once a minute
 * instead of once per flush. The public hour, day and month tables read the `*_all` views (migration
 * 0008): the folded rows plus the minute rows not folded yet, so a query sees every event written.
 *
 * The invariant, kept in every transaction: a minute row with `folded` = 1 has all its counts in
 * its hour, day and month rows, one with `folded` = 0 none. A fold slice moves rows from the one
 * state to the other with the coarser upserts; an update of a folded row (a late event) passes its
 * difference on through the trigger of migration 0008.
 */
import type { Statement } from "bun:sqlite";
import { inTransaction, type Storage } from "../../storage/db.ts";
import { MINUTE_UNFOLDED_INDEX } from "../../storage/schema/index.ts";
import { ROLLUP_ADD_SQL, ROLLUP_KEY_SQL, ROLLUP_TABLES } from "./rollups.ts";

/** How late after its minute has ended a minute row is folded, once an event that late is written. */
export const FOLD_GRACE_MS = 5_000;

const MINUTE_MS = 60_000;

/** The columns a rollup row is copied with; the slice table has them all. */
const COLUMNS = "time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, \"count\", spent_credits, latency_sum_ms, latency_max_ms";
const DIMENSIONS = "workspace_id, key_space_id, key_id, identity_id, outcome, tags";

/** The start of a minute row's bucket in each coarser rollup, as SQL over `time` (UTC; as bucketStartMs). */
const BUCKET_SQL = {
  hour: "time / 3600000 * 3600000",
  day: "time / 86400000 * 86400000",
  month: "CAST(unixepoch(time / 1000, 'unixepoch', 'start of month') * 1000 AS INTEGER)",
} as const;

/** The minutes the fold may take once events up to `latestEventMs` are written: those that ended FOLD_GRACE_MS before. */
export function foldableBefore(latestEventMs: number): number {
  return Math.floor((latestEventMs - FOLD_GRACE_MS) / MINUTE_MS) * MINUTE_MS;
}

export class RollupFolder {
  private readonly clearSlice: Statement;
  private readonly nextWorkspace: Statement<{ id: string | null }, [string]>;
  private readonly takeSlice: Statement<unknown, [string, number, number]>;
  private readonly upserts: Statement[];
  private readonly markFolded: Statement;

  constructor(private readonly storage: Storage) {
    const sqlite = storage.sqlite;
    const minute = ROLLUP_TABLES.minute;
    // The slice of one fold, so that the coarser upserts and the marking read exactly the same rows.
    sqlite.run(`CREATE TEMP TABLE IF NOT EXISTS tg_fold_slice AS SELECT ${COLUMNS} FROM main.${minute} WHERE 0`);
    this.clearSlice = sqlite.prepare("DELETE FROM temp.tg_fold_slice");
    // Workspace by workspace, each a seek of the index: without one, a search for rows before the
    // bound would read every unfolded row of the current minute when none is before it.
    this.nextWorkspace = sqlite.prepare<{ id: string | null }, [string]>(
      `SELECT min(workspace_id) AS id FROM main.${minute} INDEXED BY ${MINUTE_UNFOLDED_INDEX} WHERE folded = 0 AND workspace_id > ?1`,
    );
    this.takeSlice = sqlite.prepare<unknown, [string, number, number]>(
      `INSERT INTO temp.tg_fold_slice SELECT ${COLUMNS} FROM main.${minute} INDEXED BY ${MINUTE_UNFOLDED_INDEX}
       WHERE folded = 0 AND workspace_id = ?1 AND time < ?2 LIMIT ?3`,
    );
    this.upserts = (["hour", "day", "month"] as const).map((g) => sqlite.prepare(
      `INSERT INTO main.${ROLLUP_TABLES[g]} (${COLUMNS})
       SELECT ${BUCKET_SQL[g]} AS bucket, workspace_id, key_space_id, key_id, identity_id, min(external_id), outcome, tags,
         sum("count"), sum(spent_credits), sum(latency_sum_ms), max(latency_max_ms)
       FROM temp.tg_fold_slice WHERE true GROUP BY bucket, ${DIMENSIONS}
       ON CONFLICT (${ROLLUP_KEY_SQL}) DO UPDATE SET ${ROLLUP_ADD_SQL}`,
    ));
    this.markFolded = sqlite.prepare(
      `UPDATE main.${minute} SET folded = 1 WHERE folded = 0 AND (${ROLLUP_KEY_SQL}) IN (SELECT ${ROLLUP_KEY_SQL} FROM temp.tg_fold_slice)`,
    );
  }

  /**
   * Folds at most `maxRows` unfolded minute rows of minutes before `beforeMs` into the hour, day
   * and month rollups, in one transaction; returns how many it folded (fewer than `maxRows`: none are left).
   */
  foldSlice(beforeMs: number, maxRows: number): number {
    return inTransaction(this.storage, () => {
      this.clearSlice.run();
      let taken = 0;
      for (let workspace = this.nextWorkspace.get("")?.id; workspace != null && taken < maxRows; workspace = this.nextWorkspace.get(workspace)?.id) {
        taken += this.takeSlice.run(workspace, beforeMs, maxRows - taken).changes;
      }
      if (taken === 0) return 0;
      for (const upsert of this.upserts) upsert.run();
      const marked = this.markFolded.run().changes;
      // Every row of the slice was unfolded inside this transaction: anything else breaks the invariant.
      if (marked !== taken) throw new Error(`fold slice took ${taken} minute rows but marked ${marked}`);
      this.clearSlice.run();
      return taken;
    });
  }

  /** Folds every unfolded minute row before `beforeMs`, slice after slice; returns how many. */
  foldAll(beforeMs: number, sliceRows = 10_000): number {
    let total = 0;
    for (;;) {
      const folded = this.foldSlice(beforeMs, sliceRows);
      total += folded;
      if (folded < sliceRows) return total;
    }
  }
}
