/** Writing audit entries: one row per change, inside the transaction of that change. */
import type { Db } from "../../storage/db.ts";
import { auditLogs } from "../../storage/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import type { Actor } from "../auth/index.ts";

export interface AuditResource {
  type: string;
  id: string;
  name?: string;
}

export interface AuditEntryInput {
  workspaceId: string;
  event: string;
  actor: Actor;
  resources: AuditResource[];
  description: string;
  timeMs: number;
}

/** Writes one entry; call it inside the transaction that makes the change. Returns the log id. */
export function recordAudit(db: Db, entry: AuditEntryInput): string {
  const id = newId("log");
  db.insert(auditLogs).values({
    id,
    workspaceId: entry.workspaceId,
    time: entry.timeMs,
    event: entry.event,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    actorName: entry.actor.name ?? null,
    resources: entry.resources,
    description: entry.description,
    remoteIp: entry.actor.remoteIp ?? null,
    userAgent: entry.actor.userAgent ?? null,
  }).run();
  return id;
}
