/**
 * Rate-limit decisions for analytics: counted in memory per (workspace, namespace, UTC minute) as
 * ratelimit.limit / multiLimit decide (two map lookups and an increment on the hot path, no I/O),
 * and added to the `ratelimit_decisions_<granularity>` tables when the verification events are
 * flushed, by the same writer (on `serve`'s writer thread). Every granularity is written at flush
 * rather than folded from the minute rows later: a flush holds a handful of rows per active
 * namespace, so four upserts each cost little, and a month of per-day counts then reads a few rows
 * per namespace and day. The pending rows are capped: namespaces are created by callers and have no
 * bound of their own.
 */
import type { Database } from "bun:sqlite";
import { bucketStartMs, GRANULARITIES, type Granularity } from "./rollups.ts";

/** One (workspace, namespace, minute)'s decisions not yet written. */
export interface DecisionRow {
  workspaceId: string;
  namespaceId: string;
  /** The minute's start, Unix ms (UTC). */
  minuteMs: number;
  passed: number;
  blocked: number;
}

/** Where flushed decision rows go: adds them to every granularity's table, or rejects having added none. */
export interface DecisionRowWriter {
  writeRatelimitDecisions(rows: readonly DecisionRow[]): Promise<void>;
}

/**
 * Pending (namespace, minute) rows held at most: with the default flush every second, as many
 * namespaces deciding in the same second. About 150 bytes a row.
 */
export const DEFAULT_MAX_PENDING_DECISION_ROWS = 50_000;

const MINUTE_MS = 60_000;

export const DECISION_TABLES: Readonly<Record<Granularity, string>> = {
  minute: "ratelimit_decisions_minute",
  hour: "ratelimit_decisions_hour",
  day: "ratelimit_decisions_day",
  month: "ratelimit_decisions_month",
};

export class RatelimitDecisionAggregator {
  /** namespace id (unique across workspaces) → minute start → its row. */
  private pending = new Map<string, Map<number, DecisionRow>>();
  private rowCount = 0;
  private droppedCount = 0;
  private readonly maxRows: number;

  constructor(private readonly deps: { writer: DecisionRowWriter; maxPendingRows?: number }) {
    this.maxRows = Math.max(1, deps.maxPendingRows ?? DEFAULT_MAX_PENDING_DECISION_ROWS);
  }

  /** Counts one decision at `timeMs`; a new row past the cap is dropped and counted instead. */
  record(workspaceId: string, namespaceId: string, passed: boolean, timeMs: number): void {
    const row = this.rowFor(workspaceId, namespaceId, Math.floor(timeMs / MINUTE_MS) * MINUTE_MS);
    if (row === undefined) this.droppedCount++;
    else if (passed) row.passed++;
    else row.blocked++;
  }

  /** Rows held, not yet handed to the writer. */
  get pendingRows(): number {
    return this.rowCount;
  }

  /** Decisions dropped since the last call, because the pending rows were at their cap. */
  takeDropped(): number {
    const n = this.droppedCount;
    this.droppedCount = 0;
    return n;
  }

  /**
   * Hands every pending row to the writer; resolves with how many once written. On failure the
   * rows' counts are pending again (added to those recorded since) and the error is thrown.
   */
  async flush(): Promise<number> {
    if (this.rowCount === 0) return 0;
    const rows = [...this.pending.values()].flatMap((byMinute) => [...byMinute.values()]);
    this.pending = new Map();
    this.rowCount = 0;
    try {
      await this.deps.writer.writeRatelimitDecisions(rows);
      return rows.length;
    } catch (error) {
      for (const r of rows) this.putBack(r);
      throw error;
    }
  }

  private putBack(r: DecisionRow): void {
    const row = this.rowFor(r.workspaceId, r.namespaceId, r.minuteMs);
    if (row === undefined) {
      this.droppedCount += r.passed + r.blocked;
      return;
    }
    row.passed += r.passed;
    row.blocked += r.blocked;
  }

  /** The pending row of a namespace's minute, made when there is room; undefined past the cap. */
  private rowFor(workspaceId: string, namespaceId: string, minuteMs: number): DecisionRow | undefined {
    let byMinute = this.pending.get(namespaceId);
    const row = byMinute?.get(minuteMs);
    if (row !== undefined) return row;
    if (this.rowCount >= this.maxRows) return undefined;
    if (byMinute === undefined) {
      byMinute = new Map();
      this.pending.set(namespaceId, byMinute);
    }
    const fresh = { workspaceId, namespaceId, minuteMs, passed: 0, blocked: 0 };
    byMinute.set(minuteMs, fresh);
    this.rowCount++;
    return fresh;
  }
}

/** Adds `rows` to every granularity's table in one transaction: all of them, or none. */
export function writeDecisionRows(sqlite: Database, rows: readonly DecisionRow[]): void {
  const statements = GRANULARITIES.map((g) => [g, sqlite.query<unknown, [number, string, string, number, number]>(
    `INSERT INTO ${DECISION_TABLES[g]} (time, workspace_id, namespace_id, passed, blocked) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (workspace_id, time, namespace_id) DO UPDATE SET passed = passed + excluded.passed, blocked = blocked + excluded.blocked`,
  )] as const);
  sqlite.transaction(() => {
    for (const r of rows) {
      for (const [g, statement] of statements) statement.run(bucketStartMs(g, r.minuteMs), r.workspaceId, r.namespaceId, r.passed, r.blocked);
    }
  }).immediate();
}

/** The writer thread's message with rows to write, and its answer. */
export interface DecisionsRequest {
  type: "ratelimit-decisions";
  id: number;
  rows: DecisionRow[];
}

export interface DecisionsReply {
  type: "ratelimit-decisions-written";
  id: number;
  /** Set when nothing was written. */
  error?: string;
}

/** On the writer thread: writes a request's rows, answering whether they are written. */
export function answerDecisions(sqlite: Database | undefined, request: DecisionsRequest): DecisionsReply {
  if (sqlite === undefined) return { type: "ratelimit-decisions-written", id: request.id, error: "the writer was not opened" };
  try {
    writeDecisionRows(sqlite, request.rows);
    return { type: "ratelimit-decisions-written", id: request.id };
  } catch (error) {
    return { type: "ratelimit-decisions-written", id: request.id, error: (error as Error).message };
  }
}

/** On the main thread: the decision writes sent to the writer thread, awaiting its answers. */
export class DecisionWrites {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(): void; reject(error: Error): void }>();

  /** The message for `rows`, and the promise its answer settles. */
  send(rows: readonly DecisionRow[]): { request: DecisionsRequest; written: Promise<void> } {
    const id = this.nextId++;
    const written = new Promise<void>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    return { request: { type: "ratelimit-decisions", id, rows: [...rows] }, written };
  }

  answered(reply: DecisionsReply): void {
    const waiter = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    if (reply.error === undefined) waiter?.resolve();
    else waiter?.reject(new Error(reply.error));
  }

  /** The writer thread died: every write in flight failed (a write it committed just before would be added twice). */
  failAll(message: string): void {
    for (const waiter of this.waiting.values()) waiter.reject(new Error(message));
    this.waiting.clear();
  }
}
