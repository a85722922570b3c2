/**
 * How a batch of verification events crosses from the main thread to the writer thread: numbers in
 * typed arrays, strings that repeat as indexes into a dictionary both sides keep. The main thread
 * sends each of those once (ids, outcomes, tag sets as their stored JSON text); after that an event
 * costs it a few map look-ups and array writes, and the message is two typed arrays, the strings
 * that are new, and the events' request ids as one JSON text. Serialising each batch to JSON
 * instead took most of the pipeline's main-thread cost (the text of every event, and the
 * collections its allocation brought on). Request ids never repeat, so they travel on their own:
 * through the dictionary each was a map insertion on both sides and grew it to its bound within
 * seconds under load (encoding took 1.2 µs an event with them in it, 0.13 without). One text
 * rather than a list of strings, so that a batch the main thread keeps until its commit holds one
 * string, not one per event (see WorkerEventWriter).
 *
 * The dictionary is bounded: past MAX_DICTIONARY_STRINGS the encoder starts a new one and says so
 * in the next message, and the decoder starts over with it. Messages between two threads keep their
 * order, so the two stay in step; a writer that is replaced starts with a new encoder.
 */
import { Dictionary, NUMBERS_PER_EVENT, putEvent, REFS_PER_EVENT, storedEvents, type EventColumns } from "./columns.ts";
import { storedTags, type StoredEvent, type VerificationEvent } from "./types.ts";

/** Strings kept before both sides start a new dictionary: distinct keys, identities, tag sets. */
export const MAX_DICTIONARY_STRINGS = 200_000;

export interface EncodedEvents {
  /** The dictionary starts over with this message (its strings are the first of the new one). */
  reset: boolean;
  /** Strings added to the dictionary, in index order, after those of earlier messages. */
  strings: string[];
  /** Per event, in the order of columns.ts: workspace, key space, key, identity, external id, outcome, tags. */
  refs: Uint32Array<ArrayBuffer>;
  /** Per event: time, spent credits, latency. */
  numbers: Float64Array<ArrayBuffer>;
  /** JSON text: an array with each event's request id; '' when no event has one (verifications do not know theirs). */
  requestIds: string;
}

/** The main thread's side. */
export class EventEncoder {
  /** A new one when the dictionary starts over, so a batch encoded before can still be decoded. */
  private strings = new Dictionary();
  /** A one-tag set by its tag, and a larger one by its JSON text as sent, to the index of its stored text. */
  private readonly singleTags = new Map<string, number>();
  private readonly tagLists = new Map<string, number>();
  private resetPending = true;

  constructor(private readonly maxStrings = MAX_DICTIONARY_STRINGS) {}

  encode(events: readonly VerificationEvent[]): EncodedEvents {
    if (this.strings.strings.length > this.maxStrings) this.startOver();
    const dictionary = this.strings;
    const added = dictionary.strings.length;
    const refs = new Uint32Array(events.length * REFS_PER_EVENT);
    const numbers = new Float64Array(events.length * NUMBERS_PER_EVENT);
    const requestIds = new Array<string>(events.length);
    let anyRequestId = false;
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      putEvent(refs, numbers, i, e, this.tagsRef(e.tags), dictionary);
      const requestId = e.requestId ?? "";
      requestIds[i] = requestId;
      if (requestId !== "") anyRequestId = true;
    }
    const reset = this.resetPending;
    this.resetPending = false;
    return { reset, strings: dictionary.strings.slice(added), refs, numbers, requestIds: anyRequestId ? JSON.stringify(requestIds) : "" };
  }

  /** The dictionary as of the last `encode`: with a message's other fields, enough to decode it (`decodeEvents`). */
  get dictionary(): readonly string[] {
    return this.strings.strings;
  }

  private tagsRef(tags: readonly string[]): number {
    if (tags.length === 0) return this.strings.intern("[]");
    const byTag = tags.length === 1;
    const key = byTag ? tags[0]! : JSON.stringify(tags);
    const known = byTag ? this.singleTags : this.tagLists;
    let i = known.get(key);
    if (i === undefined) {
      i = this.strings.intern(storedTags(tags));
      known.set(key, i);
    }
    return i;
  }

  private startOver(): void {
    this.singleTags.clear();
    this.tagLists.clear();
    this.strings = new Dictionary();
    this.resetPending = true;
  }
}

/** The writer thread's side: the same dictionary, rebuilt from the messages in order. */
export class EventDecoder {
  private strings: string[] = [];

  /** Strings in the dictionary now. */
  get size(): number {
    return this.strings.length;
  }

  /**
   * The message's events as columns over the dictionary. Columns decoded before and after a
   * reset hold different dictionaries (a reset starts a new array, so those before still read).
   */
  decode(message: EncodedEvents): EventColumns {
    if (message.reset) this.strings = [];
    for (const s of message.strings) this.strings.push(s);
    return columnsOfMessage(this.strings, message);
  }
}

/** A message's events as columns, with the dictionary it was encoded with. */
function columnsOfMessage(strings: readonly string[], message: Pick<EncodedEvents, "refs" | "numbers" | "requestIds">): EventColumns {
  const count = message.numbers.length / NUMBERS_PER_EVENT;
  const requestIds = message.requestIds === "" ? undefined : JSON.parse(message.requestIds) as string[];
  return { strings, refs: message.refs, numbers: message.numbers, requestIds, count };
}

/** The events of a message, with the dictionary it was encoded with. */
export function decodeEvents(strings: readonly string[], message: Pick<EncodedEvents, "refs" | "numbers" | "requestIds">): StoredEvent[] {
  return storedEvents(columnsOfMessage(strings, message));
}

/** A stored event as the main thread records it again (a batch the writer could not commit). */
export function fromStored(e: StoredEvent): VerificationEvent {
  return { ...e, tags: JSON.parse(e.tags) as string[] };
}
