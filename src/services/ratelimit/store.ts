/**
 * Persistence of the limiter's windows in `ratelimit_windows`, so counts survive a restart.
 * `flush` writes what changed since the last flush in one transaction (every second and on stop);
 * `restore` loads the live rows at start, before the service listens; `prune` drops windows that
 * no longer weigh anything, from memory and from SQLite.
 *
 * A flush that fails keeps its rows and writes them first next time, so a busy database delays
 * the save but loses nothing.
 */
import type { Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";
import type { SlidingWindowLimiter, WindowRow } from "./sliding-window.ts";

const UPSERT = `INSERT INTO ratelimit_windows (counter, duration_ms, window_start_ms, count, previous_count, expires_ms)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6)
  ON CONFLICT (counter, duration_ms) DO UPDATE SET
    window_start_ms = excluded.window_start_ms, count = excluded.count,
    previous_count = excluded.previous_count, expires_ms = excluded.expires_ms`;

const SELECT_LIVE = `SELECT counter, duration_ms AS durationMs, window_start_ms AS windowStartMs, count, previous_count AS previousCount
  FROM ratelimit_windows WHERE expires_ms > ?1`;

const RESTORE_BATCH = 10_000;

/** When neither count of a row is weighed any more (the limiter's own prune rule). */
function expiresMs(row: WindowRow): number {
  return row.windowStartMs + 2 * row.durationMs;
}

export class RatelimitStore {
  private pending: WindowRow[] = [];

  constructor(private readonly deps: { storage: Storage; limiter: SlidingWindowLimiter }) {}

  /** Saves every window changed since the last flush, in one transaction; returns rows written. */
  flush(nowMs: number): number {
    const fresh = this.deps.limiter.snapshotDirty();
    // Pending rows (from a failed flush) go first, so a newer row for the same counter wins.
    const rows = this.pending.length > 0 ? [...this.pending, ...fresh] : fresh;
    if (rows.length === 0) return 0;
    let written = 0;
    try {
      const upsert = this.deps.storage.sqlite.query(UPSERT);
      inTransaction(this.deps.storage, () => {
        for (const row of rows) {
          const expires = expiresMs(row);
          if (expires <= nowMs) continue;
          upsert.run(row.counter, row.durationMs, row.windowStartMs, row.count, row.previousCount, expires);
          written++;
        }
      });
    } catch (error) {
      this.pending = rows;
      throw error;
    }
    this.pending = [];
    return written;
  }

  /** Loads every row still weighed at `nowMs` into the limiter; returns how many. */
  restore(nowMs: number): number {
    const select = this.deps.storage.sqlite.query<WindowRow, [number]>(SELECT_LIVE);
    let batch: WindowRow[] = [];
    let restored = 0;
    for (const row of select.iterate(nowMs)) {
      batch.push({ ...row });
      if (batch.length === RESTORE_BATCH) {
        this.deps.limiter.restore(batch);
        restored += batch.length;
        batch = [];
      }
    }
    this.deps.limiter.restore(batch);
    return restored + batch.length;
  }

  /** Drops windows no longer weighed at `nowMs` from memory and from SQLite. */
  prune(nowMs: number): { memory: number; stored: number } {
    const memory = this.deps.limiter.prune(nowMs);
    const stored = this.deps.storage.sqlite.run("DELETE FROM ratelimit_windows WHERE expires_ms <= ?1", [nowMs]).changes;
    return { memory, stored };
  }
}
