/**
 * The main thread's buffer of verification events: each event is written into columns (columns.ts)
 * as it is recorded, its strings as references into a dictionary, so the buffer holds no object per
 * event and a batch is handed to the writer as it stands (event-codec.ts sends it across).
 *
 * Written when recorded, while what the verification read is still at hand: buffering objects and
 * encoding them tens of milliseconds later, at hand-over, read every event and its strings back from
 * memory, and cost the main thread far more than writing them into reused buffers (ColumnArrays) as
 * they are recorded. A key's five strings (its subject) are interned once: the buffer remembers
 * their references by the subject object, which verification keeps per cached key, and does not read
 * the strings again.
 */
import {
  ColumnArrays, Dictionary, EXTERNAL_ID, IDENTITY, KEY, KEY_SPACE, NUMBERS_PER_EVENT, putEvent, putSubject, REFS_PER_EVENT, SUBJECT_REFS, WORKSPACE,
  type EventBatch,
} from "./columns.ts";
import { eventsOf } from "./event-codec.ts";
import { storedTags, type EventSubject, type VerificationEvent } from "./types.ts";

/** Strings kept before the buffer starts a new dictionary: distinct keys, identities, tag sets. */
export const MAX_DICTIONARY_STRINGS = 200_000;

/**
 * Subjects whose references the buffer remembers before it forgets them all and starts again
 * (2 MB of references). Verification makes a subject each time it loads a key, so a key set larger
 * than its cache brings new ones without new strings.
 */
export const MAX_REMEMBERED_SUBJECTS = 100_000;

export interface EventBufferOptions {
  /**
   * Events the columns are sized for at least; they grow past it. After each `take`, the new
   * columns are sized for a quarter more than the batch taken, so that a steady flow of events
   * fills them without growing them (each growth copies the columns).
   */
  capacity: number;
  /** Where the columns' buffers come from (a writer gives back those of the batches it is done with). */
  arrays?: ColumnArrays;
  maxStrings?: number;
  maxSubjects?: number;
}

export class EventBuffer {
  /** A new one when the dictionary starts over, so that columns taken before still read their strings. */
  private dictionary = new Dictionary();
  /** A one-tag set by its tag, and a larger one by its JSON text as sent, to the index of its stored text. */
  private readonly singleTags = new Map<string, number>();
  private readonly tagLists = new Map<string, number>();
  private noTags = -1;
  /** Subjects seen with this dictionary, to where their five references are kept in `subjectRefs`. */
  private subjects = new WeakMap<EventSubject, number>();
  private subjectRefs = new Uint32Array(SUBJECT_REFS * 1024);
  private subjectCount = 0;
  private refs: Uint32Array<ArrayBuffer>;
  private numbers: Float64Array<ArrayBuffer>;
  /** Each event's request id, '' when none; undefined until an event has one. */
  private requestIds: string[] | undefined;
  private size = 0;
  private readonly arrays: ColumnArrays;
  private readonly capacity: number;
  private readonly maxStrings: number;
  private readonly maxSubjects: number;

  constructor(opts: EventBufferOptions) {
    this.capacity = Math.max(1, opts.capacity);
    this.maxStrings = opts.maxStrings ?? MAX_DICTIONARY_STRINGS;
    this.maxSubjects = opts.maxSubjects ?? MAX_REMEMBERED_SUBJECTS;
    this.arrays = opts.arrays ?? new ColumnArrays();
    ({ refs: this.refs, numbers: this.numbers } = this.arrays.take(this.capacity));
  }

  get count(): number {
    return this.size;
  }

  put(e: VerificationEvent): void {
    if (this.size * NUMBERS_PER_EVENT === this.numbers.length) this.grow(2 * this.size);
    const i = this.size;
    const at = this.subjectAt(e.subject);
    const subject = this.subjectRefs;
    const refs = this.refs;
    const r = i * REFS_PER_EVENT;
    refs[r + WORKSPACE] = subject[at + WORKSPACE]!;
    refs[r + KEY_SPACE] = subject[at + KEY_SPACE]!;
    refs[r + KEY] = subject[at + KEY]!;
    refs[r + IDENTITY] = subject[at + IDENTITY]!;
    refs[r + EXTERNAL_ID] = subject[at + EXTERNAL_ID]!;
    putEvent(refs, this.numbers, i, e, this.tagsRef(e.tags), this.dictionary);
    const requestId = e.requestId ?? "";
    if (this.requestIds !== undefined) this.requestIds.push(requestId);
    else if (requestId !== "") {
      this.requestIds = new Array<string>(i).fill("");
      this.requestIds.push(requestId);
    }
    this.size = i + 1;
  }

  /**
   * The buffered events, as columns over arrays of their own (views of buffers the caller may
   * transfer, or give back to the buffer's ColumnArrays), and an empty buffer. A dictionary past its
   * bound starts over here, never within a batch.
   */
  take(): EventBatch {
    const taken = {
      strings: this.dictionary.strings,
      refs: this.refs.subarray(0, this.size * REFS_PER_EVENT),
      numbers: this.numbers.subarray(0, this.size * NUMBERS_PER_EVENT),
      requestIds: this.requestIds,
      count: this.size,
    };
    ({ refs: this.refs, numbers: this.numbers } = this.arrays.take(Math.max(this.capacity, this.size + (this.size >> 2))));
    this.requestIds = undefined;
    this.size = 0;
    if (this.dictionary.strings.length > this.maxStrings) this.startOver();
    return taken;
  }

  /** Buffers `events` ahead of those buffered now (a batch the writer gave back). */
  putAhead(events: readonly VerificationEvent[]): void {
    const later = this.take();
    for (const e of events) this.put(e);
    for (const e of eventsOf(later)) this.put(e);
  }

  /** Drops the `n` oldest events (a buffer that cannot be written must stay bounded). */
  dropOldest(n: number): void {
    const drop = Math.min(n, this.size);
    this.refs.copyWithin(0, drop * REFS_PER_EVENT, this.size * REFS_PER_EVENT);
    this.numbers.copyWithin(0, drop * NUMBERS_PER_EVENT, this.size * NUMBERS_PER_EVENT);
    this.requestIds?.splice(0, drop);
    this.size -= drop;
  }

  /** Where the subject's references are in `subjectRefs`, interned on its first event. */
  private subjectAt(s: EventSubject): number {
    let at = this.subjects.get(s);
    if (at === undefined) {
      if (this.subjectCount >= this.maxSubjects) this.forgetSubjects();
      at = this.subjectCount * SUBJECT_REFS;
      if (at === this.subjectRefs.length) {
        const grown = new Uint32Array(2 * this.subjectRefs.length);
        grown.set(this.subjectRefs);
        this.subjectRefs = grown;
      }
      putSubject(this.subjectRefs, at, s, this.dictionary);
      this.subjectCount++;
      this.subjects.set(s, at);
    }
    return at;
  }

  private tagsRef(tags: readonly string[]): number {
    if (tags.length === 0) {
      if (this.noTags < 0) this.noTags = this.dictionary.intern(storedTags(tags));
      return this.noTags;
    }
    const byTag = tags.length === 1;
    const key = byTag ? tags[0]! : JSON.stringify(tags);
    const known = byTag ? this.singleTags : this.tagLists;
    let i = known.get(key);
    if (i === undefined) {
      i = this.dictionary.intern(storedTags(tags));
      known.set(key, i);
    }
    return i;
  }

  private grow(events: number): void {
    ({ refs: this.refs, numbers: this.numbers } = this.arrays.grow({ refs: this.refs, numbers: this.numbers }, this.size, Math.max(events, this.capacity)));
  }

  private forgetSubjects(): void {
    this.subjects = new WeakMap();
    this.subjectCount = 0;
  }

  private startOver(): void {
    this.singleTags.clear();
    this.tagLists.clear();
    this.noTags = -1;
    this.forgetSubjects();
    this.dictionary = new Dictionary();
  }
}
