/**
 * Raw verification events as stored: one row of `verification_event_batches` per workspace, key
 * space, UTC minute and written chunk, its events a JSON array of arrays laid out as EVENT_FIELDS
 * says (layout 2; rows of layout 1 hold every field of every event, see the schema), read back one
 * row per event by the view `verification_events`. A row spans a minute at most, so retention keeps
 * no event more than a minute too long. Times count from the row's `min_time`, and the fields from
 * `tags` on are left off from the end while they hold their default (about half the bytes).
 */
import type { Database, Statement } from "bun:sqlite";
import { getTableName } from "drizzle-orm";
import { verificationEventBatches } from "../../storage/schema/index.ts";
import type { StoredEvent } from "./types.ts";

/** The layout of the batch rows written now (the schema's `layout`). */
export const RAW_LAYOUT = 2;

/** The fields of a stored event, by position; `time` counts from the row's `min_time`. */
export const EVENT_FIELDS = [
  "time", "key_id", "outcome", "spent_credits", "latency_ms", "tags", "identity_id", "external_id", "request_id",
] as const;

/** Each optional field's default: the view gives it where a row leaves the field off. */
export const OPTIONAL_DEFAULTS = { tags: "[]", identity_id: "", external_id: "", request_id: "" } as const;

export interface EventBatchRow {
  workspaceId: string;
  keySpaceId: string;
  minTime: number;
  maxTime: number;
  eventCount: number;
  /** JSON text: an array of events, each an array of EVENT_FIELDS. */
  events: string;
}

/**
 * The most events the writer puts in one transaction, and so in one batch row: a few milliseconds
 * of holding analytics.db's write lock, so the retention prune on the main thread never waits long
 * for it. Retention sizes its deletes of batch rows by it.
 */
export const MAX_CHUNK_EVENTS = 1000;

const MINUTE_MS = 60_000;

/** `events` as batch rows, one per workspace, key space and minute, each keeping the events' order. */
export function batchRows(events: readonly StoredEvent[]): EventBatchRow[] {
  const groups = new Map<string, StoredEvent[]>();
  for (const e of events) {
    const key = `${e.workspaceId}\u0000${e.keySpaceId}\u0000${Math.floor(e.timeMs / MINUTE_MS)}`;
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  return [...groups.values()].map((group) => {
    const minTime = group.reduce((min, e) => Math.min(min, e.timeMs), Infinity);
    const maxTime = group.reduce((max, e) => Math.max(max, e.timeMs), -Infinity);
    const rows = group.map((e) => storedFields(e, minTime));
    return { workspaceId: group[0]!.workspaceId, keySpaceId: group[0]!.keySpaceId, minTime, maxTime, eventCount: group.length, events: JSON.stringify(rows) };
  });
}

/** An event's EVENT_FIELDS, the optional ones up to the last not at its default. */
function storedFields(e: StoredEvent, minTime: number): (string | number)[] {
  const fields: (string | number)[] = [e.timeMs - minTime, e.keyId, e.outcome, e.spentCredits, e.latencyMs];
  const kept = e.requestId !== OPTIONAL_DEFAULTS.request_id ? 4
    : e.externalId !== OPTIONAL_DEFAULTS.external_id ? 3
    : e.identityId !== OPTIONAL_DEFAULTS.identity_id ? 2
    : e.tags !== OPTIONAL_DEFAULTS.tags ? 1 : 0;
  if (kept > 0) fields.push(e.tags);
  if (kept > 1) fields.push(e.identityId);
  if (kept > 2) fields.push(e.externalId);
  if (kept > 3) fields.push(e.requestId);
  return fields;
}

/**
 * The raw events' part of a write (tables.ts): rows built before the transaction, so that the write
 * lock is held only for SQLite's own work, and inserted in it. The upgrade tests write the first layout through another.
 */
export interface RawRowWriter {
  rows(events: readonly StoredEvent[]): readonly EventBatchRow[];
  insert(row: EventBatchRow): void;
}

/** Batch rows of RAW_LAYOUT, as the event writer writes them. */
export class RawRows implements RawRowWriter {
  private readonly statement: Statement<unknown, Array<string | number>>;

  constructor(sqlite: Database) {
    this.statement = sqlite.prepare(
      `INSERT INTO ${getTableName(verificationEventBatches)} (workspace_id, key_space_id, min_time, max_time, event_count, events, layout)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ${RAW_LAYOUT})`,
    );
  }

  rows(events: readonly StoredEvent[]): EventBatchRow[] {
    return batchRows(events);
  }

  insert(b: EventBatchRow): void {
    this.statement.run(b.workspaceId, b.keySpaceId, b.minTime, b.maxTime, b.eventCount, b.events);
  }
}
