/**
 * Reading the audit log (audit.getLog, audit.listLogs) and pruning it. An entry is visible only to
 * its own workspace and only while it is within retention by the injected clock, so an expired
 * entry that the daily prune has not removed yet is already gone for readers.
 */
import { and, desc, eq, gte, lt, lte, or, sql, type SQL } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { auditLogs } from "../../storage/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { AppError } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import type { AuditResource } from "./record.ts";

const DAY_MS = 86_400_000;
/** The page size when `limit` is not given. */
export const DEFAULT_PAGE = 100;

/** The time before which an entry is expired at `nowMs` (Unix ms). */
export function retentionCutoffMs(nowMs: number, retentionDays: number): number {
  return nowMs - retentionDays * DAY_MS;
}

export interface AuditLogView {
  logId: string;
  /** Unix ms. */
  time: number;
  event: string;
  actor: { type: string; id: string; name?: string };
  resources: AuditResource[];
  description: string;
  remoteIp?: string;
  userAgent?: string;
}

export interface ListLogsInput {
  /** 1..100, default 100. */
  limit?: number;
  /** The `logId` of the first entry of the page, from the previous page. */
  cursor?: string;
  event?: string;
  actorId?: string;
  /** Entries naming this record among their resources. */
  resourceId?: string;
  /** Unix ms, inclusive. */
  since?: number;
  /** Unix ms, inclusive. */
  until?: number;
}

export interface AuditLogPage {
  items: AuditLogView[];
  /** The next page's cursor; undefined on the last page. */
  cursor: string | undefined;
}

/** A stored entry as read; the PostgreSQL reader (pg-audit-log.ts) gives the same shape. */
export type AuditRow = typeof auditLogs.$inferSelect;

export class AuditService {
  constructor(private readonly deps: { storage: Storage; clock: Clock; retentionDays: number }) {}

  /** Entries older than this are expired (Unix ms). */
  private cutoffMs(nowMs: number): number {
    return retentionCutoffMs(nowMs, this.deps.retentionDays);
  }

  /** One entry; 404 `audit_log_not_found` when missing, expired or of another workspace. Needs `audit.*.read_log`. */
  getLog(principal: Principal, input: { logId: string }): AuditLogView {
    requirePermission(principal, "audit", "*", "read_log");
    const row = this.deps.storage.db.select().from(auditLogs)
      .where(and(eq(auditLogs.id, input.logId), eq(auditLogs.workspaceId, principal.workspaceId), this.live())).get();
    if (!row) throw new AppError("audit_log_not_found", { detail: "The requested audit log entry does not exist." });
    return toView(row);
  }

  /**
   * A page of entries, newest first (by time, then log id), filtered by every field given. An
   * unknown or expired cursor gives an empty last page: everything after it has expired too, or it
   * never belonged to this workspace. Needs `audit.*.read_log`.
   */
  listLogs(principal: Principal, input: ListLogsInput): AuditLogPage {
    requirePermission(principal, "audit", "*", "read_log");
    const { db } = this.deps.storage;
    const ws = principal.workspaceId;
    const limit = input.limit ?? DEFAULT_PAGE;
    const conditions = [eq(auditLogs.workspaceId, ws), this.live(), ...filters(input)];
    if (input.cursor !== undefined) {
      const at = db.select({ time: auditLogs.time }).from(auditLogs)
        .where(and(eq(auditLogs.id, input.cursor), eq(auditLogs.workspaceId, ws), this.live())).get();
      if (!at) return { items: [], cursor: undefined };
      conditions.push(or(lt(auditLogs.time, at.time), and(eq(auditLogs.time, at.time), lte(auditLogs.id, input.cursor)))!);
    }
    const rows = db.select().from(auditLogs).where(and(...conditions))
      .orderBy(desc(auditLogs.time), desc(auditLogs.id)).limit(limit + 1).all();
    return { items: rows.slice(0, limit).map(toView), cursor: rows[limit]?.id };
  }

  /** Deletes every entry past retention at `nowMs`; returns how many. */
  prune(nowMs: number): number {
    return this.deps.storage.sqlite.run("DELETE FROM audit_logs WHERE time < ?1", [this.cutoffMs(nowMs)]).changes;
  }

  private live(): SQL {
    return gte(auditLogs.time, this.cutoffMs(this.deps.clock.now()));
  }
}

function filters(input: ListLogsInput): SQL[] {
  const out: SQL[] = [];
  if (input.event !== undefined) out.push(eq(auditLogs.event, input.event));
  if (input.actorId !== undefined) out.push(eq(auditLogs.actorId, input.actorId));
  if (input.since !== undefined) out.push(gte(auditLogs.time, input.since));
  if (input.until !== undefined) out.push(lte(auditLogs.time, input.until));
  if (input.resourceId !== undefined) {
    out.push(sql`exists (select 1 from json_each(${auditLogs.resources}) where json_extract(value, '$.id') = ${input.resourceId})`);
  }
  return out;
}

/** The API's view of a stored entry. */
export function toView(row: AuditRow): AuditLogView {
  const view: AuditLogView = {
    logId: row.id,
    time: row.time,
    event: row.event,
    actor: { type: row.actorType, id: row.actorId, ...(row.actorName !== null ? { name: row.actorName } : {}) },
    resources: row.resources,
    description: row.description,
  };
  if (row.remoteIp !== null) view.remoteIp = row.remoteIp;
  if (row.userAgent !== null) view.userAgent = row.userAgent;
  return view;
}
