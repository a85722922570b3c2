/**
 * Reading the audit log (audit.getLog, audit.listLogs) and pruning it on PostgreSQL (cluster mode),
 * with the SQLite service's answers for the same rows and inputs: the same permission check,
 * retention cutoff, filters, order, cursor and views (service.ts's own helpers).
 *
 * Log ids are ordered and compared with COLLATE "C", byte order, which is SQLite's BINARY order
 * for UTF-8 text, whatever the database's own collation. The resourceId filter reads the
 * `resources` text as jsonb and, as SQLite's json_extract(…) = ?, matches only a string id: a
 * number there is no match for the text given. `time` is read as float8 (Bun's client returns
 * int8 as strings).
 */
import type { SQL } from "bun";
import type { Clock } from "../../lib/clock.ts";
import { AppError } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { DEFAULT_PAGE, retentionCutoffMs, toView, type AuditLogPage, type AuditLogView, type AuditRow, type ListLogsInput } from "./service.ts";

const COLUMNS = `id, workspace_id AS "workspaceId", time::float8 AS time, event, actor_type AS "actorType", actor_id AS "actorId",
  actor_name AS "actorName", resources, description, remote_ip AS "remoteIp", user_agent AS "userAgent"`;

type PgAuditRow = Omit<AuditRow, "resources"> & { resources: string };

/** A WHERE clause built with its parameters, numbered as they are added. */
class Conditions {
  readonly params: unknown[] = [];
  private readonly parts: string[] = [];

  /** `build` receives the placeholders of `values`, in their order. */
  add(build: (...placeholders: string[]) => string, ...values: unknown[]): void {
    const placeholders = values.map((value) => `$${this.params.push(value)}`);
    this.parts.push(build(...placeholders));
  }

  get sql(): string {
    return this.parts.join(" AND ");
  }
}

export class PgAuditLog {
  /** `sql` is the caller's pool (closed by it). */
  constructor(private readonly deps: { sql: SQL; clock: Clock; retentionDays: number }) {}

  /** One entry; 404 `audit_log_not_found` when missing, expired or of another workspace. Needs `audit.*.read_log`. */
  async getLog(principal: Principal, input: { logId: string }): Promise<AuditLogView> {
    requirePermission(principal, "audit", "*", "read_log");
    const where = this.visible(principal);
    where.add((p) => `id = ${p}`, input.logId);
    const [row] = await this.deps.sql.unsafe<PgAuditRow[]>(`SELECT ${COLUMNS} FROM audit_logs WHERE ${where.sql}`, where.params);
    if (!row) throw new AppError("audit_log_not_found", { detail: "The requested audit log entry does not exist." });
    return toView(parsed(row));
  }

  /**
   * A page of entries, newest first (by time, then log id in byte order), filtered by every field
   * given. An unknown or expired cursor gives an empty last page, as in SQLite. Needs `audit.*.read_log`.
   */
  async listLogs(principal: Principal, input: ListLogsInput): Promise<AuditLogPage> {
    requirePermission(principal, "audit", "*", "read_log");
    const { sql } = this.deps;
    const limit = input.limit ?? DEFAULT_PAGE;
    const where = this.visible(principal);
    if (input.event !== undefined) where.add((p) => `event = ${p}`, input.event);
    if (input.actorId !== undefined) where.add((p) => `actor_id = ${p}`, input.actorId);
    if (input.since !== undefined) where.add((p) => `time >= ${p}`, input.since);
    if (input.until !== undefined) where.add((p) => `time <= ${p}`, input.until);
    if (input.resourceId !== undefined) {
      where.add((p) => `EXISTS (SELECT 1 FROM jsonb_array_elements(resources::jsonb) r
        WHERE jsonb_typeof(r -> 'id') = 'string' AND r ->> 'id' = ${p})`, input.resourceId);
    }
    if (input.cursor !== undefined) {
      const at = this.visible(principal);
      at.add((p) => `id = ${p}`, input.cursor);
      const [row] = await sql.unsafe<{ time: number }[]>(`SELECT time::float8 AS time FROM audit_logs WHERE ${at.sql}`, at.params);
      if (!row) return { items: [], cursor: undefined };
      where.add((t, c) => `(time < ${t} OR (time = ${t} AND id COLLATE "C" <= ${c}))`, row.time, input.cursor);
    }
    const rows = await sql.unsafe<PgAuditRow[]>(
      `SELECT ${COLUMNS} FROM audit_logs WHERE ${where.sql} ORDER BY time DESC, id COLLATE "C" DESC LIMIT $${where.params.length + 1}`,
      [...where.params, limit + 1],
    );
    return { items: rows.slice(0, limit).map((row) => toView(parsed(row))), cursor: rows[limit]?.id };
  }

  /** Deletes every entry past retention at `nowMs`; returns how many. */
  async prune(nowMs: number): Promise<number> {
    const result = await this.deps.sql.unsafe(`DELETE FROM audit_logs WHERE time < $1`, [retentionCutoffMs(nowMs, this.deps.retentionDays)]);
    return result.count;
  }

  /** The caller's workspace's entries within retention by the clock. */
  private visible(principal: Principal): Conditions {
    const where = new Conditions();
    where.add((p) => `workspace_id = ${p}`, principal.workspaceId);
    where.add((p) => `time >= ${p}`, retentionCutoffMs(this.deps.clock.now(), this.deps.retentionDays));
    return where;
  }
}

function parsed(row: PgAuditRow): AuditRow {
  return { ...row, resources: JSON.parse(row.resources) as AuditRow["resources"] };
}
