/**
 * Raw verification events as stored: one row of `verification_event_batches` per workspace, UTC
 * minute and written chunk, its events a JSON array of arrays with EVENT_FIELDS in this order. The
 * view `verification_events` (migrations/0007_raw_events_in_batches.sql) reads them back one row
 * per event, by the same positions. A row never spans more than a minute, so retention, which
 * drops a row once all of it is past, keeps no event more than a minute too long, and a query's
 * time range reads at most a minute more on either side.
 */
import {
  columnsOf, EXTERNAL_ID, IDENTITY, inOrder, KEY, KEY_SPACE, LATENCY, NUMBERS_PER_EVENT, OUTCOME, REFS_PER_EVENT, SPENT, TAGS, TIME, WORKSPACE,
  type EventColumns, type Positions,
} from "./columns.ts";
import { JsonBytes, utf8 } from "./json-bytes.ts";
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

/** A batch row as the writer inserts it: its JSON as UTF-8 bytes (stored as TEXT). */
export interface RawBatchRow extends Omit<EventBatchRow, "events"> {
  events: Uint8Array;
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

/**
 * Builds batch rows from event columns, their JSON written as bytes (json-bytes.ts). The strings
 * between an event's time and its spent credits (key space, key, identity, external id, outcome,
 * tag set) are nearly always the same for a key, so their JSON is kept per key and made again only
 * when one of them changes.
 */
export class RawRowBuilder {
  private strings: readonly string[] = [];
  /** Per key reference: the references its middle piece was made of, and the piece. */
  private readonly middles = new Map<number, { refs: number[]; json: Uint8Array }>();
  private readonly json = new JsonBytes();

  /**
   * `positions` of `c` as batch rows, one per workspace and minute, each keeping the events' order.
   * Their bytes are views of one buffer: valid until the next call.
   */
  rows(c: EventColumns, positions: Positions): RawBatchRow[] {
    if (c.strings !== this.strings) {
      // Another dictionary (a reset, or columns of a tool's own): the references mean other strings.
      this.strings = c.strings;
      this.middles.clear();
    }
    this.json.reset();
    const rows: RawBatchRow[] = [];
    for (const group of this.groups(c, positions)) rows.push(this.row(c, group));
    return rows;
  }

  /**
   * The positions grouped by workspace, then minute. A chunk's events nearly always share both, so
   * the maps are consulted only where the pair changes (a key made of both per event cost a third
   * of this work).
   */
  private groups(c: EventColumns, positions: Positions): number[][] {
    const byWorkspace = new Map<number, Map<number, number[]>>();
    const groups: number[][] = [];
    let current: number[] | undefined;
    let workspace = -1;
    let minute = NaN;
    for (let p = 0; p < positions.length; p++) {
      const i = positions[p]!;
      const w = c.refs[i * REFS_PER_EVENT + WORKSPACE]!;
      const m = Math.floor(c.numbers[i * NUMBERS_PER_EVENT + TIME]! / MINUTE_MS);
      if (current === undefined || m !== minute || w !== workspace) {
        workspace = w;
        minute = m;
        let minutes = byWorkspace.get(w);
        if (!minutes) byWorkspace.set(w, (minutes = new Map()));
        current = minutes.get(m);
        if (!current) {
          minutes.set(m, (current = []));
          groups.push(current);
        }
      }
      current.push(i);
    }
    return groups;
  }

  private row(c: EventColumns, group: number[]): RawBatchRow {
    const { refs, numbers, requestIds } = c;
    const json = this.json;
    const start = json.mark;
    json.byte(OPEN);
    let minTime = Infinity;
    let maxTime = -Infinity;
    for (let g = 0; g < group.length; g++) {
      const i = group[g]!;
      const n = i * NUMBERS_PER_EVENT;
      const time = numbers[n + TIME]!;
      if (time < minTime) minTime = time;
      if (time > maxTime) maxTime = time;
      if (g > 0) json.byte(COMMA);
      json.byte(OPEN);
      if (requestIds === undefined) json.bytes(NO_REQUEST_ID);
      else json.string(requestIds[i]!);
      json.byte(COMMA);
      json.number(time);
      json.byte(COMMA);
      json.bytes(this.middle(refs, i * REFS_PER_EVENT));
      json.byte(COMMA);
      json.number(numbers[n + SPENT]!);
      json.byte(COMMA);
      json.milliseconds(numbers[n + LATENCY]!);
      json.byte(CLOSE);
    }
    json.byte(CLOSE);
    const workspaceId = this.strings[refs[group[0]! * REFS_PER_EVENT + WORKSPACE]!]!;
    return { workspaceId, minTime, maxTime, eventCount: group.length, events: json.since(start) };
  }

  /** The JSON of the event's fields from key space to tag set, without brackets, as EVENT_FIELDS orders them. */
  private middle(refs: Uint32Array, r: number): Uint8Array {
    const key = refs[r + KEY]!;
    const known = this.middles.get(key);
    if (known && sameMiddle(known.refs, refs, r)) return known.json;
    const mine = MIDDLE.map((field) => refs[r + field]!);
    const json = utf8(mine.map((ref) => JSON.stringify(this.strings[ref]!)).join(","));
    this.middles.set(key, { refs: mine, json });
    return json;
  }
}

const OPEN = "[".charCodeAt(0);
const CLOSE = "]".charCodeAt(0);
const COMMA = ",".charCodeAt(0);
const NO_REQUEST_ID = utf8('""');

/** The string fields of an event between its time and its spent credits, in EVENT_FIELDS' order. */
const MIDDLE = [KEY_SPACE, KEY, IDENTITY, EXTERNAL_ID, OUTCOME, TAGS] as const;

function sameMiddle(known: number[], refs: Uint32Array, r: number): boolean {
  for (let f = 0; f < MIDDLE.length; f++) if (known[f] !== refs[r + MIDDLE[f]!]) return false;
  return true;
}

/** `events` as batch rows, one per workspace and minute, each keeping the events' order, with their JSON as text. */
export function batchRows(events: readonly StoredEvent[]): EventBatchRow[] {
  const text = new TextDecoder();
  return new RawRowBuilder().rows(columnsOf(events), inOrder(events.length)).map((row) => ({ ...row, events: text.decode(row.events) }));
}
