/** PostgreSQL twin of storage/schema/audit.ts: the audit log. */
import { index, pgTable, text } from "drizzle-orm/pg-core";
import { int8, jsonText } from "./columns.ts";

/** One change made through the API or the CLI; written in the same transaction as the change. */
export const auditLogs = pgTable("audit_logs", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull(),
  time: int8("time").notNull(),
  event: text("event").notNull(),
  actorType: text("actor_type").notNull(),
  actorId: text("actor_id").notNull(),
  actorName: text("actor_name"),
  /** JSON array of `{type, id, name?}`. */
  resources: jsonText<Array<{ type: string; id: string; name?: string }>>("resources").notNull(),
  description: text("description").notNull(),
  remoteIp: text("remote_ip"),
  userAgent: text("user_agent"),
}, (t) => [index("audit_logs_workspace_time_idx").on(t.workspaceId, t.time)]);
