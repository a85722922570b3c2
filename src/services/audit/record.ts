/**
 * Writing audit entries: one row per change, inside the transaction of that change. The
 * User-Agent is whatever the client sent, up to the server's header size: it is stored cut to
 * MAX_USER_AGENT_CHARS, so that no caller grows every entry of its changes by kilobytes.
 */
import type { AuditLogRow, Records } from "../../storage/records/index.ts";
import { then, type Maybe } from "../../storage/work.ts";
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

export const MAX_USER_AGENT_CHARS = 256;

/** `text` cut to `maxChars` UTF-16 units, without splitting a surrogate pair. */
function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const last = text.charCodeAt(maxChars - 1);
  const highSurrogate = last >= 0xd800 && last <= 0xdbff;
  return text.slice(0, highSurrogate ? maxChars - 1 : maxChars);
}

/** The row of an entry, with a new log id. */
function auditRow(entry: AuditEntryInput): AuditLogRow & { id: string } {
  return {
    id: newId("log"),
    workspaceId: entry.workspaceId,
    time: entry.timeMs,
    event: entry.event,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    actorName: entry.actor.name ?? null,
    resources: entry.resources,
    description: entry.description,
    remoteIp: entry.actor.remoteIp ?? null,
    userAgent: entry.actor.userAgent === undefined ? null : cut(entry.actor.userAgent, MAX_USER_AGENT_CHARS),
  };
}

/** Writes one entry in a unit of work's transaction, the one that makes the change; answers the log id. */
export function writeAudit(records: Records, entry: AuditEntryInput): Maybe<string> {
  const row = auditRow(entry);
  return then(records.audit.insert(row), () => row.id);
}

