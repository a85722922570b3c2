/**
 * Audit log: one entry for every change, written by the service that makes the change, inside the
 * same transaction, so a change and its entry are stored together or not at all.
 * Entries never carry secrets (key strings, root keys, master key). Reading (audit.getLog,
 * audit.listLogs) sees only the caller's workspace and only entries within retention; older
 * entries are pruned daily.
 */
export { writeAudit, type AuditEntryInput, type AuditResource } from "./record.ts";
export { AuditService, type AuditLogView, type AuditLogPage, type ListLogsInput } from "./service.ts";
