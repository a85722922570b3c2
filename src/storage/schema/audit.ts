import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One change made through the API or the CLI; written in the same transaction as the change. */
export const auditLogs = sqliteTable("audit_logs", {
  id: text("id").primaryKey(),
  workspaceId: text("workspace_id").notNull(),
  time: integer("time").notNull(),
  event: text("event").notNull(),
  actorType: text("actor_type").notNull(),
  actorId: text("actor_id").notNull(),
  actorName: text("actor_name"),
  /** JSON array of `{type, id, name?}`. */
  resources: text("resources", { mode: "json" }).$type<Array<{ type: string; id: string; name?: string }>>().notNull(),
  description: text("description").notNull(),
  remoteIp: text("remote_ip"),
  userAgent: text("user_agent"),
}, (t) => [index("audit_logs_workspace_time_idx").on(t.workspaceId, t.time)]);
