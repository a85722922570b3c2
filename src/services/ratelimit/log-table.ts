/**
 * SQL of the window log (`ratelimit_log`) and of the first storage format (`ratelimit_windows`),
 * for RatelimitStore. Chunks are appended at the end of the table (INTEGER PRIMARY KEY), so a
 * flush dirties only a few new pages however many counters it saves.
 */
import type { Database } from "bun:sqlite";
import type { Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";
import type { WindowRow } from "./sliding-window.ts";
import { decodeChunk, splitLegacyCounter, type EncodedChunk } from "./window-log.ts";

const INSERT = "INSERT INTO ratelimit_log (windows, expires_ms, data) VALUES (?1, ?2, ?3)";
const DELETE_UP_TO = `DELETE FROM ratelimit_log WHERE seq IN (SELECT seq FROM ratelimit_log WHERE seq <= ?1 ORDER BY seq LIMIT ?2)
  RETURNING windows`;
const DELETE_EXPIRED = `DELETE FROM ratelimit_log WHERE seq IN (SELECT seq FROM ratelimit_log WHERE expires_ms <= ?1 ORDER BY seq LIMIT ?2)
  RETURNING windows`;

interface LegacyRow {
  counter: string;
  durationMs: number;
  windowStartMs: number;
  count: number;
  previousCount: number;
}

const SELECT_LEGACY = `SELECT counter, duration_ms AS durationMs, window_start_ms AS windowStartMs, count, previous_count AS previousCount
  FROM ratelimit_windows WHERE expires_ms > ?1`;

/** Rows and windows removed by a delete. */
export interface Deleted {
  rows: number;
  windows: number;
}

export class WindowLogTable {
  private readonly sqlite: Database;

  constructor(private readonly storage: Storage) {
    this.sqlite = storage.sqlite;
  }

  /** Appends chunks in one transaction; all or none. */
  append(chunks: readonly EncodedChunk[]): void {
    if (chunks.length === 0) return;
    const insert = this.sqlite.query(INSERT);
    inTransaction(this.storage, () => {
      for (const c of chunks) insert.run(c.windows, c.expiresMs, c.data);
    });
  }

  /** The last chunk's seq (0 for an empty log). */
  lastSeq(): number {
    return this.sqlite.query<{ seq: number | null }, []>("SELECT max(seq) AS seq FROM ratelimit_log").get()?.seq ?? 0;
  }

  /** Windows held by every chunk, live or superseded. */
  totalWindows(): number {
    return this.sqlite.query<{ n: number | null }, []>("SELECT sum(windows) AS n FROM ratelimit_log").get()?.n ?? 0;
  }

  /** Deletes at most `maxRows` chunks with seq <= `seq`, oldest first. */
  deleteUpTo(seq: number, maxRows: number): Deleted {
    return sumDeleted(this.sqlite.query<{ windows: number }, [number, number]>(DELETE_UP_TO).all(seq, maxRows));
  }

  /** Deletes at most `maxRows` chunks none of whose windows weighs anything at `nowMs`. */
  deleteExpired(nowMs: number, maxRows: number): Deleted {
    return sumDeleted(this.sqlite.query<{ windows: number }, [number, number]>(DELETE_EXPIRED).all(nowMs, maxRows));
  }

  /**
   * Every window of the log that may still weigh at `nowMs`, newest first (a later window of a
   * counter before an earlier one). Chunks whose windows have all expired are not read.
   */
  *replayNewestFirst(nowMs: number): Generator<WindowRow> {
    const select = this.sqlite.query<{ data: string }, [number]>("SELECT data FROM ratelimit_log WHERE expires_ms > ?1 ORDER BY seq DESC");
    for (const { data } of select.iterate(nowMs)) {
      const rows = decodeChunk(data);
      for (let i = rows.length - 1; i >= 0; i--) yield rows[i]!;
    }
  }

  /** The rows of the first storage format still weighed at `nowMs`; unreadable counter names are skipped. */
  *legacyRows(nowMs: number): Generator<WindowRow> {
    for (const row of this.sqlite.query<LegacyRow, [number]>(SELECT_LEGACY).iterate(nowMs)) {
      const split = splitLegacyCounter(row.counter);
      if (split === undefined) continue;
      yield { ...split, durationMs: row.durationMs, windowStartMs: row.windowStartMs, count: row.count, previousCount: row.previousCount };
    }
  }

  /** Whether any row of the first storage format is left. */
  hasLegacyRows(): boolean {
    return this.sqlite.query<{ one: number }, []>("SELECT 1 AS one FROM ratelimit_windows LIMIT 1").get() !== null;
  }

  /** Deletes every row of the first storage format (once the log holds their windows). */
  deleteLegacyRows(): number {
    return this.sqlite.run("DELETE FROM ratelimit_windows").changes;
  }
}

function sumDeleted(rows: readonly { windows: number }[]): Deleted {
  let windows = 0;
  for (const r of rows) windows += r.windows;
  return { rows: rows.length, windows };
}
