/**
 * Verification events packed as they are recorded: their numbers in one Float64Array, a string
 * field as its index in `strings`, where each distinct string of the batch appears once. The sink
 * keeps no object per event (so none outlives the verification that made it, and the collector has
 * nothing to promote), handing a batch over costs a copy of the array, and the writer thread
 * neither parses text nor makes a string per event.
 */
import { storedTags, type StoredEvent, type VerificationEvent } from "./types.ts";

export interface PackedEvents {
  numbers: Float64Array<ArrayBuffer>;
  strings: string[];
}

/** The numbers of one event, in the order `add` writes them. */
const FIELDS = 11;
const INITIAL_EVENTS = 1024;

export class EventPacker {
  private numbers = new Float64Array(INITIAL_EVENTS * FIELDS);
  private strings: string[] = [];
  private indexes = new Map<string, number>();
  private count = 0;

  get length(): number {
    return this.count;
  }

  add(e: VerificationEvent): void {
    if ((this.count + 1) * FIELDS > this.numbers.length) {
      const grown = new Float64Array(this.numbers.length * 2);
      grown.set(this.numbers);
      this.numbers = grown;
    }
    const n = this.numbers;
    let o = this.count++ * FIELDS;
    n[o++] = e.timeMs;
    n[o++] = this.ref(e.requestId ?? "");
    n[o++] = this.ref(e.workspaceId);
    n[o++] = this.ref(e.keySpaceId);
    n[o++] = this.ref(e.keyId);
    n[o++] = this.ref(e.identityId);
    n[o++] = this.ref(e.externalId);
    n[o++] = this.ref(e.outcome);
    n[o++] = this.ref(storedTags(e.tags));
    n[o++] = e.spentCredits;
    n[o] = e.latencyMs;
  }

  /** The events added since the last take; the packer is empty again (its array kept for reuse). */
  take(): PackedEvents {
    const packed = { numbers: this.numbers.slice(0, this.count * FIELDS), strings: this.strings };
    this.count = 0;
    this.strings = [];
    this.indexes = new Map();
    return packed;
  }

  private ref(s: string): number {
    let i = this.indexes.get(s);
    if (i === undefined) {
      i = this.strings.push(s) - 1;
      this.indexes.set(s, i);
    }
    return i;
  }
}

export function packEvents(events: Iterable<VerificationEvent>): PackedEvents {
  const packer = new EventPacker();
  for (const e of events) packer.add(e);
  return packer.take();
}

export function packedCount(p: PackedEvents): number {
  return p.numbers.length / FIELDS;
}

/** The events of `p`, as stored: what the writer writes. */
export function unpackEvents({ numbers: n, strings: s }: PackedEvents): StoredEvent[] {
  const events: StoredEvent[] = [];
  for (let o = 0; o < n.length; o += FIELDS) {
    events.push({
      timeMs: n[o]!, requestId: s[n[o + 1]!]!, workspaceId: s[n[o + 2]!]!, keySpaceId: s[n[o + 3]!]!, keyId: s[n[o + 4]!]!,
      identityId: s[n[o + 5]!]!, externalId: s[n[o + 6]!]!, outcome: s[n[o + 7]!]!, tags: s[n[o + 8]!]!, spentCredits: n[o + 9]!, latencyMs: n[o + 10]!,
    });
  }
  return events;
}

/** The events of `p` at `indexes` (all by default) as verification recorded them: a write that failed gives these back. */
export function unpackRecords(p: PackedEvents, indexes?: readonly number[]): VerificationEvent[] {
  const stored = unpackEvents(p);
  return (indexes ? indexes.map((i) => stored[i]!) : stored).map((e) => ({ ...e, tags: JSON.parse(e.tags) as string[] }));
}
