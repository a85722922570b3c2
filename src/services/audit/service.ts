/**
 * Reading the audit log (audit.getLog, audit.listLogs) and pruning it, as units of work on either
 * backend. An entry is visible only to its own workspace and only while it is within retention by
 * the injected clock, so an expired entry that the daily prune has not removed yet is already gone
 * for readers.
 */
import type { AuditLogFilters, AuditLogRecord, RecordBackend } from "../../storage/records/index.ts";
import { step, type Maybe, type Work } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { AppError } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { DEFAULT_PAGE_BYTES, fitPage, jsonBytes } from "../pages/index.ts";
import type { AuditResource } from "./record.ts";

const DAY_MS = 86_400_000;
/** The page size when `limit` is not given. */
const DEFAULT_PAGE = 100;

/** The time before which an entry is expired at `nowMs` (Unix ms). */
function retentionCutoffMs(nowMs: number, retentionDays: number): number {
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

export interface AuditDeps {
  records: RecordBackend;
  clock: Clock;
  retentionDays: number;
  /** Bytes of items one list page may hold (TOLLGATE_LIST_PAGE_BYTES); 4 MiB when left out. */
  pageBytes?: number;
}

export class AuditService {
  constructor(private readonly deps: AuditDeps) {}

  /** Entries older than this are expired (Unix ms). */
  private cutoffMs(nowMs: number): number {
    return retentionCutoffMs(nowMs, this.deps.retentionDays);
  }

  /** One entry; 404 `audit_log_not_found` when missing, expired or of another workspace. Needs `audit.*.read_log`. */
  getLog(principal: Principal, input: { logId: string }): Maybe<AuditLogView> {
    requirePermission(principal, "audit", "*", "read_log");
    const liveFromMs = this.cutoffMs(this.deps.clock.now());
    return this.deps.records.read(function* (r) {
      const row = yield* step(r.audit.find(principal.workspaceId, input.logId, liveFromMs));
      if (!row) throw new AppError("audit_log_not_found", { detail: "The requested audit log entry does not exist." });
      return toView(row);
    });
  }

  /**
   * A page of entries, newest first (by time, then log id in byte order), filtered by every field
   * given. An unknown or expired cursor gives an empty last page: everything after it has expired
   * too, or it never belonged to this workspace. Needs `audit.*.read_log`.
   */
  listLogs(principal: Principal, input: ListLogsInput): Maybe<AuditLogPage> {
    requirePermission(principal, "audit", "*", "read_log");
    const workspaceId = principal.workspaceId;
    const liveFromMs = this.cutoffMs(this.deps.clock.now());
    const limit = input.limit ?? DEFAULT_PAGE;
    const budget = this.deps.pageBytes ?? DEFAULT_PAGE_BYTES;
    return this.deps.records.read(function* (r): Work<AuditLogPage> {
      let from: { time: number; id: string } | undefined;
      if (input.cursor !== undefined) {
        const at = yield* step(r.audit.find(workspaceId, input.cursor, liveFromMs));
        if (!at) return { items: [], cursor: undefined };
        from = { time: at.time, id: at.id };
      }
      const rows = yield* step(r.audit.list({
        workspaceId, liveFromMs, limit: limit + 1, ...filters(input), ...(from !== undefined ? { from } : {}),
      }));
      return fitPage(rows.slice(0, limit).map(toView), (view) => view.logId, jsonBytes, budget, rows[limit]?.id);
    });
  }

  /** Deletes every entry past retention at `nowMs`, of every workspace; returns how many. */
  prune(nowMs: number): Maybe<number> {
    const cutoffMs = this.cutoffMs(nowMs);
    return this.deps.records.write(null, function* (r) {
      return yield* step(r.audit.deleteBefore(cutoffMs));
    });
  }
}

/** The filters of `input` that are given. */
function filters(input: ListLogsInput): AuditLogFilters {
  const out: AuditLogFilters = {};
  if (input.event !== undefined) out.event = input.event;
  if (input.actorId !== undefined) out.actorId = input.actorId;
  if (input.resourceId !== undefined) out.resourceId = input.resourceId;
  if (input.since !== undefined) out.since = input.since;
  if (input.until !== undefined) out.until = input.until;
  return out;
}

/** The API's view of a stored entry. */
function toView(row: AuditLogRecord): AuditLogView {
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
