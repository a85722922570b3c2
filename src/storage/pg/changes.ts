/**
 * Change notices across the nodes of a cluster: a transaction that changes a workspace's records
 * calls `recordChange`, and every node's `ChangeWatcher` calls `onChange(workspaceId)` so that its
 * caches of that workspace can be dropped.
 * Notices ride PostgreSQL's LISTEN/NOTIFY: sent in the changing transaction, they are delivered on
 * its commit only, so a notice never precedes or outlives its change.
 * A poll of the notice rows catches what a lost notice or a dropped listening connection missed.
 * No Redis here: the records live in PostgreSQL, whose notices are tied to their commits; a Redis
 * publish would be a second write that could land without its change, or be lost after it.
 * Each change is a row of its own (`cluster_change_notices`), inserted, never updated, and nothing
 * orders the writers: concurrent writes, in one workspace or many, wait for no lock of this module
 * (an ordering lock held to the commit made every write of the cluster take turns). So rows commit
 * in any order, and a poll cannot read "versions above the last seen". It reads instead the rows
 * of transactions whose id is at or above the oldest transaction still running at its previous
 * poll (pg_snapshot_xmin): a transaction below that had ended, and its row was read then or
 * before; one at or above may have committed since. What it reads again it skips by version.
 */
import type { SQL as BunSql } from "bun";
import { sql, type TablesRelationalConfig } from "drizzle-orm";
import type { BunSQLQueryResultHKT } from "drizzle-orm/bun-sql";
import type { PgTransaction } from "drizzle-orm/pg-core";

/** The LISTEN/NOTIFY channel of change notices. */
export const CHANGES_CHANNEL = "tollgate_changes";

export const DEFAULT_POLL_MS = 100;
export const MIN_POLL_MS = 10;
export const MAX_POLL_MS = 60_000;

/** Rows read by one poll query; a poll reads on while it gets this many. */
const POLL_BATCH = 1000;

/** Rows deleted by one prune statement; a prune deletes on while it deletes this many. */
const PRUNE_BATCH = 10_000;

/** A drizzle transaction over Bun's PostgreSQL client, whatever its schema. */
export type PgTx = PgTransaction<BunSQLQueryResultHKT, Record<string, unknown>, TablesRelationalConfig>;

/** A recorded change: its version (unique, from a sequence) and its transaction's id. */
export interface ChangeStamp {
  version: number;
  txId: number;
}

/**
 * Records, inside the caller's transaction, that `workspaceId`'s records changed: inserts its
 * notice row and notifies every watcher on commit, in one statement; answers the change's stamp.
 */
export async function recordChange(tx: PgTx, workspaceId: string): Promise<ChangeStamp> {
  const rows = await tx.execute(sql`
    WITH notice AS (
      INSERT INTO cluster_change_notices (workspace_id, version, tx_id)
      VALUES (${workspaceId}, nextval('cluster_change_version'), pg_current_xact_id()::text::int8)
      RETURNING version, tx_id)
    SELECT version::text AS version, tx_id::text AS tx_id,
      pg_notify(${CHANGES_CHANNEL}, json_build_object('workspaceId', ${workspaceId}::text, 'version', version, 'txId', tx_id)::text)
    FROM notice`) as unknown as Array<{ version: string; tx_id: string }>;
  return { version: Number(rows[0]!.version), txId: Number(rows[0]!.tx_id) };
}

/**
 * Deletes the notices that a later transaction's notice of the same workspace supersedes, in
 * batches; answers how many. Safe at any time: a poll that has not read the deleted row still
 * reads every row of a later transaction, and delivers the workspace for it. So each workspace
 * keeps its latest notice, and the table holds about one row per workspace plus the last minute's.
 */
export async function pruneSupersededChanges(db: BunSql): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await db`
      DELETE FROM cluster_change_notices WHERE version IN (
        SELECT c.version FROM cluster_change_notices c
        WHERE EXISTS (SELECT 1 FROM cluster_change_notices n WHERE n.workspace_id = c.workspace_id AND n.tx_id > c.tx_id)
        LIMIT ${PRUNE_BATCH})
      RETURNING 1`;
    deleted += rows.length;
    if (rows.length < PRUNE_BATCH) return deleted;
  }
}

/** Schedules `run` after `delayMs`; returns what cancels it. Injectable so tests run polls by hand. */
export type After = (delayMs: number, run: () => void) => () => void;

const realAfter: After = (delayMs, run) => {
  const timer = setTimeout(run, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface ChangeWatcherOptions {
  /** The client polls run on; `listen` opens a dedicated connection of its own. */
  sql: BunSql;
  /** Called for each change seen of a workspace, by whichever path saw it first (a poll calls it once per workspace). */
  onChange(workspaceId: string): void;
  /** Between the end of one poll and the start of the next: the bound on how late a lost notice is caught. */
  pollMs?: number;
  /** A failed poll, an unreadable notice or a throwing `onChange`; the watcher carries on. */
  onError?(error: Error): void;
  after?: After;
}

/** How many changes each path delivered first. */
export interface ChangeWatcherStats {
  notified: number;
  polled: number;
}

/** A page of a poll: the rows of transactions from the floor on, and the floor for the next poll. */
interface PollRow {
  workspace_id: string;
  version: string;
  tx_id: string;
  next_floor: string;
}

export class ChangeWatcher {
  private readonly pollMs: number;
  private readonly after: After;
  /** Every transaction below this id had ended when the last poll looked, and its notice was read. */
  private floor = 0;
  /** Versions delivered (or recorded by this node) whose transaction is at or above the floor, by version: their transaction ids. */
  private readonly delivered = new Map<number, number>();
  private subscription: Awaited<ReturnType<BunSql["listen"]>> | undefined;
  private cancelTimer: (() => void) | undefined;
  private polling: Promise<void> = Promise.resolve();
  private running = false;
  private readonly counts: ChangeWatcherStats = { notified: 0, polled: 0 };

  constructor(private readonly opts: ChangeWatcherOptions) {
    const pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
    if (!Number.isInteger(pollMs) || pollMs < MIN_POLL_MS || pollMs > MAX_POLL_MS) {
      throw new RangeError(`pollMs must be an integer from ${MIN_POLL_MS} to ${MAX_POLL_MS}, not ${pollMs}`);
    }
    this.pollMs = pollMs;
    this.after = opts.after ?? realAfter;
  }

  /**
   * Starts watching: changes committed from now on are delivered. What is committed already is
   * read (and not delivered) before listening, so a change committed in between is caught by the first poll.
   */
  async start(): Promise<void> {
    if (this.running || this.subscription !== undefined) throw new Error("the change watcher is already started");
    const [row] = await this.opts.sql`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS floor`;
    this.floor = Number(row.floor);
    await this.pollOnce(false);
    let listened = false;
    // After a reconnect the notices sent while disconnected are lost: poll at once rather than wait.
    this.subscription = await this.opts.sql.listen(CHANGES_CHANNEL, (payload) => this.noticed(payload), () => {
      if (listened && this.running) void this.poll().catch((e) => this.report(e));
      listened = true;
    });
    this.running = true;
    this.schedule();
  }

  /** Stops listening and polling; resolves once the listening connection is closed and no poll runs. */
  async stop(): Promise<void> {
    this.running = false;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.unlisten();
    await this.polling;
  }

  /** Reads the rows of transactions from the floor on and delivers those no notice delivered; polls run one at a time. */
  poll(): Promise<void> {
    const run = this.polling.then(() => this.pollOnce(true));
    this.polling = run.catch(() => undefined);
    return run;
  }

  /**
   * A change this node recorded itself (its caches already follow it): neither its notice nor a
   * poll delivers it. One whose transaction then rolls back is never committed, and is forgotten
   * once the floor passes its transaction.
   */
  ownChange(stamp: ChangeStamp): void {
    if (stamp.txId >= this.floor) this.delivered.set(stamp.version, stamp.txId);
  }

  stats(): ChangeWatcherStats {
    return { ...this.counts };
  }

  private async pollOnce(deliver: boolean): Promise<void> {
    let nextFloor: number | undefined;
    // A workspace changed many times since the last poll is delivered once: its caches go once.
    const changed = new Set<string>();
    let after = { txId: this.floor, version: 0 };
    for (;;) {
      // Keyset pages in (tx_id, version) order; the floor for the next poll is the first page's
      // (the oldest transaction running then), which no later page's could be below.
      const rows: PollRow[] = await this.opts.sql`
        SELECT n.workspace_id, n.version::text AS version, n.tx_id::text AS tx_id, s.next_floor
        FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS next_floor) s
        LEFT JOIN cluster_change_notices n ON (n.tx_id, n.version) > (${String(after.txId)}::int8, ${String(after.version)}::int8)
        ORDER BY n.tx_id, n.version LIMIT ${POLL_BATCH}`;
      nextFloor ??= Number(rows[0]?.next_floor ?? this.floor);
      for (const row of rows) {
        if (row.version === null) continue;
        const version = Number(row.version);
        const txId = Number(row.tx_id);
        after = { txId, version };
        if (this.delivered.has(version)) continue;
        this.delivered.set(version, txId);
        if (!deliver) continue;
        this.counts.polled++;
        changed.add(row.workspace_id);
      }
      if (rows.length < POLL_BATCH) break;
    }
    for (const workspaceId of changed) this.deliver(workspaceId);
    this.floor = Math.max(this.floor, nextFloor);
    for (const [version, txId] of this.delivered) if (txId < this.floor) this.delivered.delete(version);
  }

  private noticed(payload: string): void {
    if (!this.running) return;
    let notice: { workspaceId: string; version: number; txId: number };
    try {
      notice = JSON.parse(payload) as { workspaceId: string; version: number; txId: number };
    } catch {
      this.report(new Error(`unreadable change notice: ${payload.slice(0, 200)}`));
      return;
    }
    if (notice.txId < this.floor || this.delivered.has(notice.version)) return;
    this.delivered.set(notice.version, notice.txId);
    this.counts.notified++;
    this.deliver(notice.workspaceId);
  }

  private deliver(workspaceId: string): void {
    try {
      this.opts.onChange(workspaceId);
    } catch (e) {
      this.report(e);
    }
  }

  private schedule(): void {
    this.cancelTimer = this.after(this.pollMs, () => {
      this.cancelTimer = undefined;
      void this.poll().catch((e) => this.report(e)).finally(() => {
        if (this.running) this.schedule();
      });
    });
  }

  private report(error: unknown): void {
    this.opts.onError?.(error instanceof Error ? error : new Error(String(error)));
  }
}
