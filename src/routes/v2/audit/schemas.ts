/** Response schema of the audit.* routes. */
import { t } from "elysia";

export const AuditLogData = t.Object({
  logId: t.String({ description: "Entry id (`log_…`)" }),
  time: t.Integer({ description: "When it happened (Unix ms)" }),
  event: t.String({ description: "What happened, e.g. `key.create`" }),
  actor: t.Object({
    type: t.String({ description: "`root_key`, `cli` (the command line) or `system` (a scheduled job)" }),
    id: t.String({ description: "The root key's id, or who acted otherwise" }),
    name: t.Optional(t.String({ description: "The root key's name" })),
  }, { description: "Who did it" }),
  resources: t.Array(t.Object({
    type: t.String({ description: "Kind of record, e.g. `api`, `key`" }),
    id: t.String({ description: "Its id" }),
    name: t.Optional(t.String({ description: "Its name, where it has one" })),
  }), { description: "The records it concerned" }),
  description: t.String({ description: "A sentence saying what happened" }),
  remoteIp: t.Optional(t.String({ description: "The client's address" })),
  userAgent: t.Optional(t.String({ description: "The client's User-Agent" })),
});
