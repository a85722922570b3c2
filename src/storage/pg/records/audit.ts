/**
 * The audit log's records on PostgreSQL (cluster mode), as records/audit.ts answers: log ids
 * ordered and compared by bytes, and the resourceId filter reading the `resources` text as jsonb
 * and, as SQLite's json_extract(…) = ?, matching only a string id (a number there is no match).
 */
import { and, desc, eq, gte, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { byBytes, type PgDb } from "../db.ts";
import { auditLogs } from "../schema/index.ts";
import type { AuditLogQuery, AuditLogRecord, AuditLogRow, AuditStore } from "../../records/audit.ts";

/** The conditions of `query` but its limit. */
function conditionsOf(query: AuditLogQuery): SQL[] {
  const out: SQL[] = [eq(auditLogs.workspaceId, query.workspaceId), gte(auditLogs.time, query.liveFromMs)];
  if (query.event !== undefined) out.push(eq(auditLogs.event, query.event));
  if (query.actorId !== undefined) out.push(eq(auditLogs.actorId, query.actorId));
  if (query.since !== undefined) out.push(gte(auditLogs.time, query.since));
  if (query.until !== undefined) out.push(lte(auditLogs.time, query.until));
  if (query.resourceId !== undefined) {
    out.push(sql`exists (select 1 from jsonb_array_elements(${auditLogs.resources}::jsonb) r
      where jsonb_typeof(r -> 'id') = 'string' and r ->> 'id' = ${query.resourceId})`);
  }
  if (query.from !== undefined) {
    const { time, id } = query.from;
    out.push(or(lt(auditLogs.time, time), and(eq(auditLogs.time, time), lte(byBytes(auditLogs.id), id)))!);
  }
  return out;
}

export class PgAuditStore implements AuditStore {
  constructor(private readonly db: PgDb) {}

  async insert(row: AuditLogRow): Promise<void> {
    await this.db.insert(auditLogs).values(row);
  }

  async find(workspaceId: string, logId: string, liveFromMs: number): Promise<AuditLogRecord | undefined> {
    const [row] = await this.db.select().from(auditLogs)
      .where(and(eq(auditLogs.id, logId), eq(auditLogs.workspaceId, workspaceId), gte(auditLogs.time, liveFromMs)));
    return row;
  }

  async list(query: AuditLogQuery): Promise<AuditLogRecord[]> {
    return this.db.select().from(auditLogs).where(and(...conditionsOf(query)))
      .orderBy(desc(auditLogs.time), desc(byBytes(auditLogs.id))).limit(query.limit);
  }

  async deleteBefore(cutoffMs: number): Promise<number> {
    // Bun's client answers a statement without rows with the number it changed as `count`.
    const result = await this.db.delete(auditLogs).where(lt(auditLogs.time, cutoffMs));
    return (result as unknown as { count: number }).count;
  }
}
