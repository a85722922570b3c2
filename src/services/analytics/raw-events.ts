/**
 * Raw verification events as stored: one row of `verification_event_batches` per workspace, key
 * space, UTC minute and written chunk, its events a JSON array of arrays laid out as EVENT_FIELDS
 * says (layout 2; rows of layout 1, written before, hold every field of every event, see the
 * schema). The view `verification_events` (analytics.db's migration 0001) reads both back one row
 * per event, by the same positions. A row never spans more than a minute, so retention, which
 * drops a row once all of it is past, keeps no event more than a minute too long, and a query's
 * time range reads at most a minute more on either side.
 *
 * The workspace and key space are the row's, times count from the row's `min_time`, and the fields
 * from `tags` on are left off from the end while they hold their default (no tags, no identity, no
 * request id): an event of a key with one tag and no identity takes 56 bytes, where every field in
 * full took 98. Those bytes were most of the writer's work (inserted, and copied again by the
 * checkpointer); the view reads fewer too.
 */
import type { Database, Statement } from "bun:sqlite";
import { getTableName } from "drizzle-orm";
import { verificationEventBatches } from "../../storage/schema/index.ts";
import {
  columnsOf, EXTERNAL_ID, IDENTITY, inOrder, KEY, KEY_SPACE, LATENCY, NUMBERS_PER_EVENT, OUTCOME, REFS_PER_EVENT, SPENT, TAGS, TIME, WORKSPACE,
  type EventColumns, type Positions,
} from "./columns.ts";
import { JsonBytes, utf8 } from "./json-bytes.ts";
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

/** A batch row as the writer inserts it: its JSON as UTF-8 bytes (stored as TEXT). */
export interface RawBatchRow extends Omit<EventBatchRow, "events"> {
  events: Uint8Array;
}

const MINUTE_MS = 60_000;

/**
 * The most events the writer thread puts in one transaction, and so in one batch row (it makes
 * chunks smaller when events are dear, see ChunkSizer): a few milliseconds of holding analytics.db's
 * write lock with few keys. Each commit rewrites the pages it dirtied, so smaller chunks cost more
 * in all, while a longer hold makes the retention prune, which runs on the main thread, wait longer
 * for the lock. (When the analytics tables shared tollgate.db, larger chunks made the credit spends
 * wait too.) Retention sizes its deletes of batch rows by it.
 */
export const MAX_CHUNK_EVENTS = 1000;

/**
 * Builds batch rows from event columns, their JSON written as bytes (json-bytes.ts). Each string
 * is quoted once per dictionary, and written from then on as the bytes kept for its reference.
 */
export class RawRowBuilder {
  private strings: readonly string[] = [];
  /** By dictionary reference: the string as JSON, once it has been written. */
  private quoted: (Uint8Array | undefined)[] = [];
  private readonly json = new JsonBytes();

  /**
   * `positions` of `c` as batch rows, one per workspace, key space and minute, each keeping the
   * events' order. Their bytes are views of one buffer: valid until the next call.
   */
  rows(c: EventColumns, positions: Positions): RawBatchRow[] {
    if (c.strings !== this.strings) {
      // Another dictionary (a reset, or columns of a tool's own): the references mean other strings.
      this.strings = c.strings;
      this.quoted = [];
    }
    this.json.reset();
    const rows: RawBatchRow[] = [];
    for (const group of this.groups(c, positions)) rows.push(this.row(c, group));
    return rows;
  }

  /**
   * The positions grouped by workspace and key space, then minute. A chunk's events nearly always
   * share all three, so the map is consulted only where they change (a key made of them per event
   * was a large part of this work).
   */
  private groups(c: EventColumns, positions: Positions): number[][] {
    const groupOf = new Map<string, number[]>();
    const groups: number[][] = [];
    let current: number[] | undefined;
    let workspace = -1;
    let keySpace = -1;
    let minute = NaN;
    for (let p = 0; p < positions.length; p++) {
      const i = positions[p]!;
      const r = i * REFS_PER_EVENT;
      const w = c.refs[r + WORKSPACE]!;
      const k = c.refs[r + KEY_SPACE]!;
      const m = Math.floor(c.numbers[i * NUMBERS_PER_EVENT + TIME]! / MINUTE_MS);
      if (current === undefined || m !== minute || w !== workspace || k !== keySpace) {
        workspace = w;
        keySpace = k;
        minute = m;
        const key = `${w} ${k} ${m}`;
        current = groupOf.get(key);
        if (!current) {
          groupOf.set(key, (current = []));
          groups.push(current);
        }
      }
      current.push(i);
    }
    return groups;
  }

  private row(c: EventColumns, group: number[]): RawBatchRow {
    const { refs, numbers, requestIds, strings } = c;
    let minTime = Infinity;
    let maxTime = -Infinity;
    for (let g = 0; g < group.length; g++) {
      const time = numbers[group[g]! * NUMBERS_PER_EVENT + TIME]!;
      if (time < minTime) minTime = time;
      if (time > maxTime) maxTime = time;
    }
    const json = this.json;
    const start = json.mark;
    json.byte(OPEN);
    for (let g = 0; g < group.length; g++) {
      const i = group[g]!;
      const n = i * NUMBERS_PER_EVENT;
      const r = i * REFS_PER_EVENT;
      if (g > 0) json.byte(COMMA);
      json.byte(OPEN);
      json.number(numbers[n + TIME]! - minTime);
      json.byte(COMMA);
      json.bytes(this.quote(refs[r + KEY]!));
      json.byte(COMMA);
      json.bytes(this.quote(refs[r + OUTCOME]!));
      json.byte(COMMA);
      json.number(numbers[n + SPENT]!);
      json.byte(COMMA);
      json.milliseconds(numbers[n + LATENCY]!);
      // The optional fields, up to the last that is not at its default.
      const requestId = requestIds?.[i] ?? "";
      const last = requestId !== "" ? 4
        : strings[refs[r + EXTERNAL_ID]!] !== "" ? 3
        : strings[refs[r + IDENTITY]!] !== "" ? 2
        : strings[refs[r + TAGS]!] !== NO_TAGS ? 1
        : 0;
      for (let f = 1; f <= last; f++) {
        json.byte(COMMA);
        if (f === 4) json.string(requestId);
        else json.bytes(this.quote(refs[r + OPTIONAL_REFS[f - 1]!]!));
      }
      json.byte(CLOSE);
    }
    json.byte(CLOSE);
    const first = group[0]! * REFS_PER_EVENT;
    return {
      workspaceId: strings[refs[first + WORKSPACE]!]!,
      keySpaceId: strings[refs[first + KEY_SPACE]!]!,
      minTime, maxTime, eventCount: group.length, events: json.since(start),
    };
  }

  /** The dictionary's string `ref` as JSON, in UTF-8. */
  private quote(ref: number): Uint8Array {
    const quoted = this.quoted;
    let bytes = quoted[ref];
    if (bytes === undefined) {
      // Filled up to `ref`, so that the array stays a dense one.
      while (quoted.length <= ref) quoted.push(undefined);
      quoted[ref] = bytes = utf8(JSON.stringify(this.strings[ref]!));
    }
    return bytes;
  }
}

const OPEN = "[".charCodeAt(0);
const CLOSE = "]".charCodeAt(0);
const COMMA = ",".charCodeAt(0);
const NO_TAGS = OPTIONAL_DEFAULTS.tags;

/** The optional fields held in the dictionary, in EVENT_FIELDS' order (the request id follows them). */
const OPTIONAL_REFS = [TAGS, IDENTITY, EXTERNAL_ID] as const;

/**
 * The raw events' part of a write (tables.ts): the rows are built before the transaction, so that
 * the write lock is held only for SQLite's own work, and inserted in it. The upgrade tests write
 * rows of the first layout through another.
 */
export interface RawRowWriter {
  rows(c: EventColumns, positions: Positions): readonly RawBatchRow[];
  insert(row: RawBatchRow): void;
}

/** Batch rows of RAW_LAYOUT, as the event writer writes them. */
export class RawRows implements RawRowWriter {
  private readonly builder = new RawRowBuilder();
  private readonly statement: Statement<unknown, Array<string | number | Uint8Array>>;

  constructor(sqlite: Database) {
    this.statement = sqlite.prepare(
      `INSERT INTO ${getTableName(verificationEventBatches)} (workspace_id, key_space_id, min_time, max_time, event_count, events, layout)
       VALUES (?1, ?2, ?3, ?4, ?5, CAST(?6 AS TEXT), ${RAW_LAYOUT})`,
    );
  }

  rows(c: EventColumns, positions: Positions): readonly RawBatchRow[] {
    return this.builder.rows(c, positions);
  }

  insert(b: RawBatchRow): void {
    this.statement.run(b.workspaceId, b.keySpaceId, b.minTime, b.maxTime, b.eventCount, b.events);
  }
}

/** `events` as batch rows, one per workspace, key space and minute, each keeping the events' order, with their JSON as text. */
export function batchRows(events: readonly StoredEvent[]): EventBatchRow[] {
  const text = new TextDecoder();
  return new RawRowBuilder().rows(columnsOf(events), inOrder(events.length)).map((row) => ({ ...row, events: text.decode(row.events) }));
}
