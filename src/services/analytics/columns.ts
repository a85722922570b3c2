/**
 * Verification events as the writer works on them: one column of string references and one of
 * numbers, each string an index into a dictionary the events share, as they cross from the main
 * thread (event-codec.ts). The writer orders, aggregates and stores them from these columns, with
 * no object per event: made per event, objects were a large part of the writer's work and most of
 * its garbage. Comparing two events' keys, identities or tag sets is comparing two integers.
 */
import type { EventSubject, StoredEvent } from "./types.ts";

/** Per event in `refs`: workspace, key space, key, identity, external id, outcome, tag set (as stored). */
export const REFS_PER_EVENT = 7;
/** The first five of an event's references are its subject's. */
export const SUBJECT_REFS = 5;
export const WORKSPACE = 0;
export const KEY_SPACE = 1;
export const KEY = 2;
export const IDENTITY = 3;
export const EXTERNAL_ID = 4;
export const OUTCOME = 5;
export const TAGS = 6;

/** Per event in `numbers`: time (Unix ms), spent credits, latency (ms). */
export const NUMBERS_PER_EVENT = 3;
export const TIME = 0;
export const SPENT = 1;
export const LATENCY = 2;

export interface EventColumns {
  /** The dictionary the references index. */
  readonly strings: readonly string[];
  readonly refs: Uint32Array;
  readonly numbers: Float64Array;
  /** Each event's request id; undefined when none is known (all ''). */
  readonly requestIds: readonly string[] | undefined;
  readonly count: number;
}

/** Columns as the main thread hands them over: views of buffers of their own, which may be transferred to another thread. */
export interface EventBatch extends EventColumns {
  readonly refs: Uint32Array<ArrayBuffer>;
  readonly numbers: Float64Array<ArrayBuffer>;
}

/** Events by their index in the columns, in the order to be written. */
export type Positions = ArrayLike<number>;

/** The positions 0 … count-1: the columns in the order they hold the events. */
export function inOrder(count: number): Uint32Array {
  const positions = new Uint32Array(count);
  for (let i = 0; i < count; i++) positions[i] = i;
  return positions;
}

/** Strings by index, each distinct one once: the dictionary the columns' references index. */
export class Dictionary {
  readonly strings: string[] = [];
  private readonly index = new Map<string, number>();

  /** The index of `s`, added when it is new. */
  intern(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.index.set(s, i);
      this.strings.push(s);
    }
    return i;
  }
}

/** Writes the references of a subject's five strings into `into` from `at`, in the order of an event's first five. */
export function putSubject(into: Uint32Array, at: number, s: EventSubject, dictionary: Dictionary): void {
  into[at + WORKSPACE] = dictionary.intern(s.workspaceId);
  into[at + KEY_SPACE] = dictionary.intern(s.keySpaceId);
  into[at + KEY] = dictionary.intern(s.keyId);
  into[at + IDENTITY] = dictionary.intern(s.identityId);
  into[at + EXTERNAL_ID] = dictionary.intern(s.externalId);
}

/** An event's fields that follow its subject's in the columns (the tag set is the caller's to resolve). */
type OtherFields = Pick<StoredEvent, "outcome" | "timeMs" | "spentCredits" | "latencyMs">;

/** Writes event `i`'s outcome, tag set (`tags`: the index of its stored text) and numbers; its subject's references are the caller's to write. */
export function putEvent(refs: Uint32Array, numbers: Float64Array, i: number, e: OtherFields, tags: number, dictionary: Dictionary): void {
  const r = i * REFS_PER_EVENT;
  refs[r + OUTCOME] = dictionary.intern(e.outcome);
  refs[r + TAGS] = tags;
  const n = i * NUMBERS_PER_EVENT;
  numbers[n + TIME] = e.timeMs;
  numbers[n + SPENT] = e.spentCredits;
  numbers[n + LATENCY] = e.latencyMs;
}

/** Stored events as columns, with a dictionary of their own (tools and tests; the served writer receives columns). */
export function columnsOf(events: readonly StoredEvent[]): EventColumns {
  const dictionary = new Dictionary();
  const refs = new Uint32Array(events.length * REFS_PER_EVENT);
  const numbers = new Float64Array(events.length * NUMBERS_PER_EVENT);
  events.forEach((e, i) => {
    putSubject(refs, i * REFS_PER_EVENT, e, dictionary);
    putEvent(refs, numbers, i, e, dictionary.intern(e.tags), dictionary);
  });
  const requestIds = events.some((e) => e.requestId !== "") ? events.map((e) => e.requestId) : undefined;
  return { strings: dictionary.strings, refs, numbers, requestIds, count: events.length };
}

/** The event at index `i` of the columns, as an object: for the events a failed write hands back. */
export function storedEventAt(c: EventColumns, i: number): StoredEvent {
  const r = i * REFS_PER_EVENT;
  const n = i * NUMBERS_PER_EVENT;
  const s = c.strings;
  return {
    workspaceId: s[c.refs[r + WORKSPACE]!]!,
    keySpaceId: s[c.refs[r + KEY_SPACE]!]!,
    keyId: s[c.refs[r + KEY]!]!,
    identityId: s[c.refs[r + IDENTITY]!]!,
    externalId: s[c.refs[r + EXTERNAL_ID]!]!,
    outcome: s[c.refs[r + OUTCOME]!]!,
    tags: s[c.refs[r + TAGS]!]!,
    requestId: c.requestIds?.[i] ?? "",
    timeMs: c.numbers[n + TIME]!,
    spentCredits: c.numbers[n + SPENT]!,
    latencyMs: c.numbers[n + LATENCY]!,
  };
}

/** Every event of the columns, in order. */
export function storedEvents(c: EventColumns): StoredEvent[] {
  return Array.from({ length: c.count }, (_, i) => storedEventAt(c, i));
}

/**
 * Columns appended batch after batch, in buffers kept from one write to the next: the writer's
 * staged events as one set of columns, without new arrays for each flush (fresh memory for them
 * cost the writer page faults and zeroing on every flush). Every batch must share one dictionary.
 */
export class ColumnStage {
  /** The stage only grows: a pair it outgrows is not kept. */
  private readonly arrays = new ColumnArrays(1024, 0);
  private refs = new Uint32Array(0);
  private numbers = new Float64Array(0);
  private requestIds: string[] | undefined;
  private strings: readonly string[] | undefined;
  private size = 0;

  get count(): number {
    return this.size;
  }

  /** The dictionary of the staged events; undefined while none is staged. */
  get dictionary(): readonly string[] | undefined {
    return this.strings;
  }

  append(c: EventColumns): void {
    if (this.size > 0 && c.strings !== this.strings) throw new Error("columns of another dictionary cannot be staged with these");
    this.strings = c.strings;
    const count = this.size + c.count;
    if (count * REFS_PER_EVENT > this.refs.length) this.grow(count);
    this.refs.set(c.refs.subarray(0, c.count * REFS_PER_EVENT), this.size * REFS_PER_EVENT);
    this.numbers.set(c.numbers.subarray(0, c.count * NUMBERS_PER_EVENT), this.size * NUMBERS_PER_EVENT);
    if (c.requestIds !== undefined || this.requestIds !== undefined) {
      this.requestIds ??= new Array<string>(this.size).fill("");
      for (let i = 0; i < c.count; i++) this.requestIds.push(c.requestIds?.[i] ?? "");
    }
    this.size = count;
  }

  /** The staged events, as columns over the stage's buffers: valid until the next append or clear. */
  columns(): EventColumns {
    return {
      strings: this.strings ?? [],
      refs: this.refs.subarray(0, this.size * REFS_PER_EVENT),
      numbers: this.numbers.subarray(0, this.size * NUMBERS_PER_EVENT),
      requestIds: this.requestIds,
      count: this.size,
    };
  }

  /** Empties the stage; its buffers are kept for the next events. */
  clear(): void {
    this.size = 0;
    this.requestIds = undefined;
    this.strings = undefined;
  }

  private grow(count: number): void {
    const capacity = Math.max(count, 2 * (this.refs.length / REFS_PER_EVENT));
    ({ refs: this.refs, numbers: this.numbers } = this.arrays.grow({ refs: this.refs, numbers: this.numbers }, this.size, capacity));
  }
}

/** A pair of column buffers, as ColumnArrays hands them out: room for `numbers.length / NUMBERS_PER_EVENT` events. */
export interface ArrayPair {
  refs: Uint32Array<ArrayBuffer>;
  numbers: Float64Array<ArrayBuffer>;
}

/**
 * Column buffers used again: the main thread's buffer takes its arrays from here, the copies of
 * batches in flight too, and the writer gives back both once it is done with them: copying each
 * batch into fresh buffers cost the main thread the allocation and the collections it brings on,
 * far more than copying into kept ones.
 */
/** The least a pair of ColumnArrays holds by default (130 kB), so that pairs fit most batches. */
export const MIN_PAIR_EVENTS = 2560;

export class ColumnArrays {
  private readonly spare: ArrayPair[] = [];

  /** `minEvents`: the least a pair holds; `keep`: spare pairs kept at most. */
  constructor(private readonly minEvents = MIN_PAIR_EVENTS, private readonly keep = 32) {}

  /** Spare pairs now. */
  get spares(): number {
    return this.spare.length;
  }

  /** A pair with room for `events` events at least (its contents are whatever it held before). */
  take(events: number): ArrayPair {
    for (let i = this.spare.length - 1; i >= 0; i--) {
      const pair = this.spare[i]!;
      if (pair.numbers.length < events * NUMBERS_PER_EVENT) continue;
      this.spare[i] = this.spare[this.spare.length - 1]!;
      this.spare.pop();
      return pair;
    }
    const capacity = Math.max(events, this.minEvents);
    return { refs: new Uint32Array(capacity * REFS_PER_EVENT), numbers: new Float64Array(capacity * NUMBERS_PER_EVENT) };
  }

  /** Takes back the whole buffers under `refs` and `numbers` (views of them will do), no longer read. */
  give(refs: Uint32Array, numbers: Float64Array): void {
    if (this.spare.length >= this.keep || refs.buffer.byteLength === 0) return;
    this.spare.push({ refs: new Uint32Array(refs.buffer as ArrayBuffer), numbers: new Float64Array(numbers.buffer as ArrayBuffer) });
  }

  /** `c` copied into a pair of these buffers; `give` its arrays back once it is not read. */
  copy(c: EventColumns): EventColumns {
    const pair = this.holding(c.count, c, c.count);
    return { ...c, refs: pair.refs.subarray(0, c.count * REFS_PER_EVENT), numbers: pair.numbers.subarray(0, c.count * NUMBERS_PER_EVENT) };
  }

  /** A pair with room for `events` events, holding the first `used` of `pair`, which is given back. */
  grow(pair: ArrayPair, used: number, events: number): ArrayPair {
    const bigger = this.holding(events, pair, used);
    this.give(pair.refs, pair.numbers);
    return bigger;
  }

  /** A pair with room for `events` events, its first `used` copied from `from`. */
  private holding(events: number, from: Pick<EventColumns, "refs" | "numbers">, used: number): ArrayPair {
    const pair = this.take(events);
    pair.refs.set(from.refs.subarray(0, used * REFS_PER_EVENT));
    pair.numbers.set(from.numbers.subarray(0, used * NUMBERS_PER_EVENT));
    return pair;
  }
}
