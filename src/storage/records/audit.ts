/** The audit log's rows as a unit of work writes them, inside the transaction of its change. */
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { auditLogs } from "../schema/index.ts";

export type AuditLogRow = typeof auditLogs.$inferInsert;

export interface AuditStore {
  insert(row: AuditLogRow): Maybe<void>;
}

export class SqliteAuditStore implements AuditStore {
  constructor(private readonly db: Db) {}

  insert(row: AuditLogRow): void {
    this.db.insert(auditLogs).values(row).run();
  }
}
