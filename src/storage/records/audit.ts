/**
 * The audit log's records (embedded: drizzle over SQLite): rows as a unit of work writes them,
 * inside the transaction of its change, and the reads and the prune of audit.getLog/listLogs.
 * Readers pass the retention cutoff (`liveFromMs`): an expired entry not yet pruned is no answer.
 */
import type { Changes } from "bun:sqlite";
import { and, desc, eq, gte, lt, lte, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { auditLogs } from "../schema/index.ts";

export type AuditLogRow = typeof auditLogs.$inferInsert;

/** A stored entry as read. */
export type AuditLogRecord = typeof auditLogs.$inferSelect;

/** Filters of a list, each applied when given. */
export interface AuditLogFilters {
  event?: string;
  actorId?: string;
  /** Entries with a resource whose `id` is this string (a non-string id is no match). */
  resourceId?: string;
  /** Unix ms, inclusive. */
  since?: number;
  /** Unix ms, inclusive. */
  until?: number;
}

export interface AuditLogQuery extends AuditLogFilters {
  workspaceId: string;
  /** Only entries at or after this time (Unix ms): the retention cutoff. */
  liveFromMs: number;
  /** From this entry on (inclusive), in the list's order. */
  from?: { time: number; id: string };
  limit: number;
}

export interface AuditStore {
  insert(row: AuditLogRow): Maybe<void>;
  /** The entry with this id in the workspace, at or after `liveFromMs`. */
  find(workspaceId: string, logId: string, liveFromMs: number): Maybe<AuditLogRecord | undefined>;
  /** Entries newest first: by time, then log id in byte order, both descending. */
  list(query: AuditLogQuery): Maybe<AuditLogRecord[]>;
  /** Deletes every entry before `cutoffMs`, of every workspace; answers how many. */
  deleteBefore(cutoffMs: number): Maybe<number>;
}

/** The conditions of `query` but its limit. */
function conditionsOf(query: AuditLogQuery): SQL[] {
  const out: SQL[] = [eq(auditLogs.workspaceId, query.workspaceId), gte(auditLogs.time, query.liveFromMs)];
  if (query.event !== undefined) out.push(eq(auditLogs.event, query.event));
  if (query.actorId !== undefined) out.push(eq(auditLogs.actorId, query.actorId));
  if (query.since !== undefined) out.push(gte(auditLogs.time, query.since));
  if (query.until !== undefined) out.push(lte(auditLogs.time, query.until));
  if (query.resourceId !== undefined) {
    out.push(sql`exists (select 1 from json_each(${auditLogs.resources}) where json_extract(value, '$.id') = ${query.resourceId})`);
  }
  if (query.from !== undefined) {
    const { time, id } = query.from;
    out.push(or(lt(auditLogs.time, time), and(eq(auditLogs.time, time), lte(auditLogs.id, id)))!);
  }
  return out;
}

export class SqliteAuditStore implements AuditStore {
  constructor(private readonly db: Db) {}

  insert(row: AuditLogRow): void {
    this.db.insert(auditLogs).values(row).run();
  }

  find(workspaceId: string, logId: string, liveFromMs: number): AuditLogRecord | undefined {
    return this.db.select().from(auditLogs)
      .where(and(eq(auditLogs.id, logId), eq(auditLogs.workspaceId, workspaceId), gte(auditLogs.time, liveFromMs))).get();
  }

  list(query: AuditLogQuery): AuditLogRecord[] {
    return this.db.select().from(auditLogs).where(and(...conditionsOf(query)))
      .orderBy(desc(auditLogs.time), desc(auditLogs.id)).limit(query.limit).all();
  }

  deleteBefore(cutoffMs: number): number {
    // drizzle types bun:sqlite's run() as void; it answers the statement's Changes.
    const result = this.db.delete(auditLogs).where(lt(auditLogs.time, cutoffMs)).run() as unknown as Changes;
    return result.changes;
  }
}
