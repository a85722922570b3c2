/**
 * Verification events packed as they are recorded: their numbers in one Float64Array, each string
 * field but the request id as the index of a string the batch lists once, and the batch's strings,
 * then its request ids, end to end in one text. The sink keeps no object per event (none outlives
 * the verification that made it); a hand-over sends two arrays and one text (a list of strings
 * costs the post a copy of each); the writer's events share their strings, as the key cache's do.
 */
import { storedTags, type StoredEvent, type VerificationEvent } from "./types.ts";

export interface PackedEvents {
  numbers: Float64Array<ArrayBuffer>;
  /** The length of each listed string, in the order the text holds them. */
  lengths: Float64Array<ArrayBuffer>;
  text: string;
}

/** Per event: time, spent credits, latency, the request id's length, then the indexes of workspace, key space, key, identity, external id, outcome, tags. */
const FIELDS = 11;

export class EventPacker {
  private numbers = new Float64Array(1024 * FIELDS);
  private strings: string[] = [];
  private indexes = new Map<string, number>();
  private requestIds: string[] = [];
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
    const o = this.count++ * FIELDS;
    const requestId = e.requestId ?? "";
    this.requestIds.push(requestId);
    n[o] = e.timeMs; n[o + 1] = e.spentCredits; n[o + 2] = e.latencyMs; n[o + 3] = requestId.length;
    n[o + 4] = this.ref(e.workspaceId); n[o + 5] = this.ref(e.keySpaceId); n[o + 6] = this.ref(e.keyId); n[o + 7] = this.ref(e.identityId);
    n[o + 8] = this.ref(e.externalId); n[o + 9] = this.ref(e.outcome); n[o + 10] = this.ref(storedTags(e.tags));
  }

  /** The events added since the last take; the packer is empty again (its array kept for reuse). */
  take(): PackedEvents {
    const lengths = new Float64Array(this.strings.map((s) => s.length));
    const packed = { numbers: this.numbers.slice(0, this.count * FIELDS), lengths, text: this.strings.join("") + this.requestIds.join("") };
    this.count = 0;
    this.strings = [];
    this.indexes = new Map();
    this.requestIds = [];
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

export const packedCount = (p: PackedEvents): number => p.numbers.length / FIELDS;

/** The events of `p`, as stored: what the writer writes. */
export function unpackEvents({ numbers: n, lengths, text }: PackedEvents): StoredEvent[] {
  let at = 0;
  const next = (length: number): string => text.slice(at, (at += length));
  const s = Array.from(lengths, next);
  const events: StoredEvent[] = [];
  for (let o = 0; o < n.length; o += FIELDS) {
    events.push({
      timeMs: n[o]!, spentCredits: n[o + 1]!, latencyMs: n[o + 2]!, requestId: next(n[o + 3]!),
      workspaceId: s[n[o + 4]!]!, keySpaceId: s[n[o + 5]!]!, keyId: s[n[o + 6]!]!, identityId: s[n[o + 7]!]!, externalId: s[n[o + 8]!]!, outcome: s[n[o + 9]!]!, tags: s[n[o + 10]!]!,
    });
  }
  return events;
}

/** The events of `p` at `indexes` (all by default) as verification recorded them: a write that failed gives these back. */
export function unpackRecords(p: PackedEvents, indexes?: readonly number[]): VerificationEvent[] {
  const stored = unpackEvents(p);
  return (indexes ? indexes.map((i) => stored[i]!) : stored).map((e) => ({ ...e, tags: JSON.parse(e.tags) as string[] }));
}
