/** The audit log's rows on PostgreSQL (cluster mode), as records/audit.ts writes them. */
import type { PgDb } from "../db.ts";
import { auditLogs } from "../schema/index.ts";
import type { AuditLogRow, AuditStore } from "../../records/audit.ts";

export class PgAuditStore implements AuditStore {
  constructor(private readonly db: PgDb) {}

  async insert(row: AuditLogRow): Promise<void> {
    await this.db.insert(auditLogs).values(row);
  }
}
