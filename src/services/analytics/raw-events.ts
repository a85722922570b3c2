/**
 * Raw verification events as stored: one row of `verification_event_batches` per workspace, UTC
 * minute and written chunk, its events a JSON array of arrays with EVENT_FIELDS in this order. The
 * view `verification_events` (migrations/0007_raw_events_in_batches.sql) reads them back one row
 * per event, by the same positions. A row never spans more than a minute, so retention, which
 * drops a row once all of it is past, keeps no event more than a minute too long, and a query's
 * time range reads at most a minute more on either side.
 */
import type { StoredEvent } from "./types.ts";

/** The fields of a stored event, by position; the workspace is the batch row's. */
export const EVENT_FIELDS = [
  "request_id", "time", "key_space_id", "key_id", "identity_id", "external_id", "outcome", "tags", "spent_credits", "latency_ms",
] as const;

export interface EventBatchRow {
  workspaceId: string;
  minTime: number;
  maxTime: number;
  eventCount: number;
  /** JSON text: an array of events, each an array of EVENT_FIELDS. */
  events: string;
}

const MINUTE_MS = 60_000;

/**
 * The most events the writer thread puts in one transaction, and so in one batch row (it makes
 * chunks smaller when events are dear, see ChunkSizer): about 5 ms of holding analytics.db's write
 * lock with few keys. Each commit rewrites the pages it dirtied, so smaller chunks cost more in
 * all (200 events a chunk took 11 µs an event, 1,000 about 7, one transaction a second about 5),
 * while a longer hold makes the retention prune, which runs on the main thread, wait longer for
 * the lock. (When the analytics tables shared tollgate.db, the credit spends waited too: 4,000 a
 * chunk gave a p99 of 25 ms.) Retention sizes its deletes of batch rows by it.
 */
export const MAX_CHUNK_EVENTS = 1000;

/** `events` as batch rows, one per workspace and minute, each keeping the events' order. */
export function batchRows(events: readonly StoredEvent[]): EventBatchRow[] {
  // Grouped by workspace, then minute; a chunk's events nearly always share both, so the maps are
  // consulted only where the pair changes (a key made of both per event cost a third of this function).
  const byWorkspace = new Map<string, Map<number, StoredEvent[]>>();
  const groups: StoredEvent[][] = [];
  let current: StoredEvent[] | undefined;
  let workspaceId = "";
  let minute = NaN;
  for (const e of events) {
    const m = Math.floor(e.timeMs / MINUTE_MS);
    if (current === undefined || m !== minute || e.workspaceId !== workspaceId) {
      workspaceId = e.workspaceId;
      minute = m;
      let minutes = byWorkspace.get(workspaceId);
      if (!minutes) byWorkspace.set(workspaceId, (minutes = new Map()));
      current = minutes.get(minute);
      if (!current) {
        minutes.set(minute, (current = []));
        groups.push(current);
      }
    }
    current.push(e);
  }
  const rows: EventBatchRow[] = [];
  for (const mine of groups) {
    let minTime = Infinity;
    let maxTime = -Infinity;
    const fields = mine.map((e) => {
      if (e.timeMs < minTime) minTime = e.timeMs;
      if (e.timeMs > maxTime) maxTime = e.timeMs;
      return [e.requestId, e.timeMs, e.keySpaceId, e.keyId, e.identityId, e.externalId, e.outcome, e.tags, e.spentCredits, e.latencyMs];
    });
    rows.push({ workspaceId: mine[0]!.workspaceId, minTime, maxTime, eventCount: mine.length, events: JSON.stringify(fields) });
  }
  return rows;
}
