/**
 * Writing events to SQLite: the raw events (a batch row per workspace, key space and minute,
 * raw-events.ts) and the upserts of their minute rollup and four totals in one transaction, so the
 * minute rollup and the totals always equal the raw events committed; the hour, day and month
 * rollups are folded from the minute rows later (fold.ts).
 */
import type { Database, Statement } from "bun:sqlite";
import { inTransaction, type Storage } from "../../storage/db.ts";
import { RawRows, type RawRowWriter } from "./raw-events.ts";
import { aggregate, GRANULARITIES, ROLLUP_ADD_SQL, ROLLUP_KEY_SQL, ROLLUP_TABLES, TOTALS_TABLES, totalsOf, type Granularity } from "./rollups.ts";
import type { StoredEvent } from "./types.ts";

type Binding = string | number;

export class EventTables {
  private readonly upsertMinute: Statement<unknown, Binding[]>;
  private readonly totals: Record<Granularity, Statement<unknown, Binding[]>>;
  private readonly rawRows: RawRowWriter;

  /** `rawRows`: how the raw events are stored; the writer's own layout unless given (the upgrade tests give an older one). */
  constructor(private readonly storage: Storage, rawRows?: RawRowWriter) {
    const sqlite: Database = storage.sqlite;
    this.rawRows = rawRows ?? new RawRows(sqlite);
    // A new row is not folded yet; a folded row that is updated passes the difference on (fold.ts).
    this.upsertMinute = sqlite.prepare<unknown, Binding[]>(
      `INSERT INTO ${ROLLUP_TABLES.minute} (time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, "count", spent_credits, latency_sum_ms, latency_max_ms, folded)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0)
       ON CONFLICT (${ROLLUP_KEY_SQL}) DO UPDATE SET ${ROLLUP_ADD_SQL}`,
    );
    const total = (table: string) => sqlite.prepare<unknown, Binding[]>(
      `INSERT INTO ${table} (time, workspace_id, key_space_id, outcome, "count", spent_credits) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (workspace_id, time, key_space_id, outcome) DO UPDATE SET
         "count" = "count" + excluded."count", spent_credits = spent_credits + excluded.spent_credits`,
    );
    this.totals = { minute: total(TOTALS_TABLES.minute), hour: total(TOTALS_TABLES.hour), day: total(TOTALS_TABLES.day), month: total(TOTALS_TABLES.month) };
  }

  /** The newest event time written by this writer, Unix ms (0 before the first): how far the fold may go. */
  latestEventMs = 0;

  /** Writes `events`, their minute rollup and their totals in one transaction. */
  write(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    // Aggregated before the transaction, so the write lock is held only for SQLite's own work.
    const batches = this.rawRows.rows(events);
    const minutes = aggregate(events, "minute");
    // The coarser totals from the minute totals, a handful of rows, rather than from every minute row again.
    const minuteTotals = totalsOf(minutes);
    const totals = GRANULARITIES.map((g) => (g === "minute" ? minuteTotals : totalsOf(minuteTotals, g)));
    inTransaction(this.storage, () => {
      for (const b of batches) this.rawRows.insert(b);
      for (const r of minutes) {
        this.upsertMinute.run(r.time, r.workspaceId, r.keySpaceId, r.keyId, r.identityId, r.externalId, r.outcome, r.tags, r.count, r.spentCredits, r.latencySumMs, r.latencyMaxMs);
      }
      GRANULARITIES.forEach((granularity, i) => {
        const total = this.totals[granularity];
        for (const t of totals[i]!) total.run(t.time, t.workspaceId, t.keySpaceId, t.outcome, t.count, t.spentCredits);
      });
    });
    for (const b of batches) if (b.maxTime > this.latestEventMs) this.latestEventMs = b.maxTime;
  }
}
