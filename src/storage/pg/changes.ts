/**
 * Change notices across the nodes of a cluster: a transaction that changes a workspace's records
 * calls `recordChange`, and every node's `ChangeWatcher` calls `onChange(workspaceId)` so that its
 * caches of that workspace can be dropped.
 * Notices ride PostgreSQL's LISTEN/NOTIFY: sent in the changing transaction, they are delivered on
 * its commit only, so a notice never precedes or outlives its change.
 * A poll of version numbers catches what a lost notice or a dropped listening connection missed.
 * No Redis here: the records live in PostgreSQL, whose notices are tied to their commits; a Redis
 * publish would be a second write that could land without its change, or be lost after it.
 * Versions come from one global sequence, taken under a transaction-level advisory lock, so they
 * commit in their order: a poll for `version > seen` through an index then misses nothing and costs
 * what changed since the last poll, however many workspaces exist (without the lock, a smaller
 * version could commit after a larger one had been seen, and the poll would skip it). The lock is
 * taken last and held only to the commit, which NOTIFY orders across the database anyway.
 * Each change is a row of its own (`cluster_change_notices`, keyed by workspace and version), inserted,
 * never updated: concurrent writes in one workspace then touch no common row, where updating one
 * row per workspace made every one of them wait for (or, at SERIALIZABLE, abort) the others.
 */
import type { SQL as BunSql } from "bun";
import { sql, type TablesRelationalConfig } from "drizzle-orm";
import type { BunSQLQueryResultHKT } from "drizzle-orm/bun-sql";
import type { PgTransaction } from "drizzle-orm/pg-core";
import { clusterChangeNotices } from "./schema/cluster.ts";

/** The LISTEN/NOTIFY channel of change notices. */
export const CHANGES_CHANNEL = "tollgate_changes";

/** The advisory lock that orders change versions as their transactions commit ("tgchange"). */
export const CHANGE_ORDER_LOCK_KEY = "8387520405958174565";

export const DEFAULT_POLL_MS = 100;
export const MIN_POLL_MS = 10;
export const MAX_POLL_MS = 60_000;

/** Rows read by one poll query; a poll reads on while it gets this many. */
const POLL_BATCH = 1000;

/** Rows deleted by one prune statement; a prune deletes on while it deletes this many. */
const PRUNE_BATCH = 10_000;

/** A drizzle transaction over Bun's PostgreSQL client, whatever its schema. */
export type PgTx = PgTransaction<BunSQLQueryResultHKT, Record<string, unknown>, TablesRelationalConfig>;

/**
 * Records, inside the caller's transaction, that `workspaceId`'s records changed: inserts a notice
 * with the next version and notifies every watcher on commit; returns the version. Call it last in
 * the transaction: from here to the commit, other transactions recording a change wait for this one.
 */
export async function recordChange(tx: PgTx, workspaceId: string): Promise<number> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${CHANGE_ORDER_LOCK_KEY}::int8)`);
  const [row] = await tx.insert(clusterChangeNotices)
    .values({ workspaceId, version: sql`nextval('cluster_change_version')` })
    .returning({ version: clusterChangeNotices.version });
  const version = row!.version;
  await tx.execute(sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${JSON.stringify({ workspaceId, version })})`);
  return version;
}

/**
 * Deletes the notices that a newer notice of the same workspace supersedes, in batches; answers how
 * many. Safe at any time: a poll that has not seen the deleted version has not seen the newer one
 * either (versions commit in order), and delivers the workspace for it. So each workspace keeps
 * its latest notice, and the table holds about one row per workspace plus the last prune's arrivals.
 */
export async function pruneSupersededChanges(db: BunSql): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await db`
      DELETE FROM cluster_change_notices WHERE version IN (
        SELECT c.version FROM cluster_change_notices c
        WHERE EXISTS (SELECT 1 FROM cluster_change_notices n WHERE n.workspace_id = c.workspace_id AND n.version > c.version)
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
  /** The node's client: polls run on its pool; `listen` opens a dedicated connection of its own. */
  sql: BunSql;
  /** Called for each newer version seen of a workspace, by whichever path saw it first (a poll calls it once per workspace). */
  onChange(workspaceId: string): void;
  /** Between the end of one poll and the start of the next: the bound on how late a lost notice is caught. */
  pollMs?: number;
  /** A failed poll, an unreadable notice or a throwing `onChange`; the watcher carries on. */
  onError?(error: Error): void;
  after?: After;
}

/** How many versions each path delivered first. */
export interface ChangeWatcherStats {
  notified: number;
  polled: number;
}

export class ChangeWatcher {
  private readonly pollMs: number;
  private readonly after: After;
  /** Every committed version up to this one has been delivered (or a newer one of its workspace has). */
  private seenThrough = 0;
  /** Versions above `seenThrough` already delivered by a notice, so the poll does not deliver them again. */
  private readonly notifiedAbove = new Set<number>();
  private subscription: Awaited<ReturnType<BunSql["listen"]>> | undefined;
  private cancelTimer: (() => void) | undefined;
  private polling: Promise<void> = Promise.resolve();
  private running = false;
  private readonly delivered: ChangeWatcherStats = { notified: 0, polled: 0 };

  constructor(private readonly opts: ChangeWatcherOptions) {
    const pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
    if (!Number.isInteger(pollMs) || pollMs < MIN_POLL_MS || pollMs > MAX_POLL_MS) {
      throw new RangeError(`pollMs must be an integer from ${MIN_POLL_MS} to ${MAX_POLL_MS}, not ${pollMs}`);
    }
    this.pollMs = pollMs;
    this.after = opts.after ?? realAfter;
  }

  /**
   * Starts watching: changes committed from now on are delivered. The starting version is read
   * before listening, so a change committed in between is caught by the first poll.
   */
  async start(): Promise<void> {
    if (this.running || this.subscription !== undefined) throw new Error("the change watcher is already started");
    const [row] = await this.opts.sql`SELECT coalesce(max(version), 0)::text AS version FROM cluster_change_notices`;
    this.seenThrough = Number(row.version);
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

  /** Reads the versions newer than the last seen and delivers those no notice delivered; polls run one at a time. */
  poll(): Promise<void> {
    const run = this.polling.then(() => this.pollOnce());
    this.polling = run.catch(() => undefined);
    return run;
  }

  /**
   * A version this node recorded itself (its caches already follow the change): neither its notice
   * nor a poll delivers it. One whose transaction then rolls back is never committed, and is
   * forgotten once the poll passes it.
   */
  ownChange(version: number): void {
    if (version > this.seenThrough) this.notifiedAbove.add(version);
  }

  stats(): ChangeWatcherStats {
    return { ...this.delivered };
  }

  private async pollOnce(): Promise<void> {
    for (;;) {
      // int8 comes back as text; named apart from `version` so that ORDER BY sorts the numbers.
      const rows: { workspace_id: string; version_text: string }[] = await this.opts.sql`
        SELECT workspace_id, version::text AS version_text FROM cluster_change_notices
        WHERE version > ${String(this.seenThrough)}::int8 ORDER BY version LIMIT ${POLL_BATCH}`;
      // A workspace changed many times since the last poll is delivered once: its caches go once.
      const changed = new Set<string>();
      for (const row of rows) {
        const version = Number(row.version_text);
        this.seenThrough = version;
        if (this.notifiedAbove.has(version)) continue;
        this.delivered.polled++;
        changed.add(row.workspace_id);
      }
      for (const workspaceId of changed) this.deliver(workspaceId);
      for (const version of this.notifiedAbove) if (version <= this.seenThrough) this.notifiedAbove.delete(version);
      if (rows.length < POLL_BATCH) return;
    }
  }

  private noticed(payload: string): void {
    if (!this.running) return;
    let notice: { workspaceId: string; version: number };
    try {
      notice = JSON.parse(payload) as { workspaceId: string; version: number };
    } catch {
      this.report(new Error(`unreadable change notice: ${payload.slice(0, 200)}`));
      return;
    }
    if (notice.version <= this.seenThrough || this.notifiedAbove.has(notice.version)) return;
    this.notifiedAbove.add(notice.version);
    this.delivered.notified++;
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
