/**
 * How a batch of verification events crosses from the main thread to the writer thread: the
 * columns the main thread buffered them in (event-buffer.ts), numbers in typed arrays whose buffers
 * are transferred, strings as indexes into a dictionary that both sides keep. Each message brings
 * the strings the writer thread does not have yet (after the first, nearly always none) and the
 * events' request ids as one JSON text. Serialising each batch to JSON instead took most of the
 * pipeline's main-thread cost (the text of every event, and the collections its allocation brought
 * on). Request ids never repeat, so they travel on their own, not through the dictionary: there each
 * was a map insertion on both sides and grew it to its bound within seconds under load. One text
 * rather than a list of strings, so that a batch the main thread keeps until its commit holds one
 * string, not one per event (see WorkerEventWriter).
 *
 * A dictionary starts over when the buffer's outgrows its bound; the next message says so, and the
 * decoder starts over with it. Messages between two threads keep their order, so the two stay in
 * step; a writer that is replaced starts with a new encoder, whose first message resets.
 */
import { NUMBERS_PER_EVENT, storedEvents, type EventBatch, type EventColumns } from "./columns.ts";
import { subjectOf, type StoredEvent, type VerificationEvent } from "./types.ts";

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

/** The main thread's side: what the writer thread's decoder has of the dictionary, and each message with what it lacks. */
export class EventEncoder {
  /** The dictionary the decoder mirrors, and how many of its strings it has. */
  private strings: readonly string[] | undefined;
  private sent = 0;

  /** The message for `c`: its typed arrays themselves (the caller transfers their buffers). */
  encode(c: EventBatch): EncodedEvents {
    const reset = c.strings !== this.strings;
    if (reset) {
      this.strings = c.strings;
      this.sent = 0;
    }
    const strings = c.strings.slice(this.sent);
    this.sent = c.strings.length;
    return { reset, strings, refs: c.refs, numbers: c.numbers, requestIds: c.requestIds === undefined ? "" : JSON.stringify(c.requestIds) };
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
    const requestIds = message.requestIds === "" ? undefined : JSON.parse(message.requestIds) as string[];
    return { strings: this.strings, refs: message.refs, numbers: message.numbers, requestIds, count: message.numbers.length / NUMBERS_PER_EVENT };
  }
}

/** The events of columns, as the main thread records them (a batch given back, or buffered again). */
export function eventsOf(c: EventColumns): VerificationEvent[] {
  return storedEvents(c).map(fromStored);
}

/** A stored event as the main thread records it again (a batch the writer could not commit). */
export function fromStored(e: StoredEvent): VerificationEvent {
  const { requestId, timeMs, outcome, spentCredits, latencyMs } = e;
  return { requestId, timeMs, subject: subjectOf(e), outcome, tags: JSON.parse(e.tags) as string[], spentCredits, latencyMs };
}
