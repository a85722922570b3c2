/**
 * A verification event as analytics stores it: the plain record verification hands over, with its
 * tag set normalised to sorted JSON text (so equal sets group together) and '' for no request id.
 */
import type { VerificationEvent } from "../verification/index.ts";

export type { VerificationEvent, VerificationRecorder } from "../verification/index.ts";

export interface StoredEvent extends Omit<VerificationEvent, "tags" | "requestId"> {
  requestId: string;
  tags: string;
}

/** A tag set as stored: sorted, as JSON text. */
export function storedTags(tags: readonly string[]): string {
  return tags.length === 0 ? "[]" : JSON.stringify([...tags].sort());
}

export function toStored(e: VerificationEvent): StoredEvent {
  return {
    requestId: e.requestId ?? "", timeMs: e.timeMs, workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId,
    identityId: e.identityId, externalId: e.externalId, outcome: e.outcome, tags: storedTags(e.tags), spentCredits: e.spentCredits, latencyMs: e.latencyMs,
  };
}

/**
 * Events as they cross to the writer thread: their numbers in one transferable array, a string
 * field as its index in `strings`, where each distinct string of the batch appears once. Neither
 * thread then writes or parses text per event, and the writer makes no string per event.
 */
export interface PackedEvents {
  numbers: Float64Array<ArrayBuffer>;
  strings: string[];
}

/** The numbers of one event, in this order. */
const FIELDS = 11;

export function packEvents(events: readonly VerificationEvent[]): PackedEvents {
  const numbers = new Float64Array(events.length * FIELDS);
  const strings: string[] = [];
  const indexes = new Map<string, number>();
  const ref = (s: string): number => {
    let i = indexes.get(s);
    if (i === undefined) {
      i = strings.push(s) - 1;
      indexes.set(s, i);
    }
    return i;
  };
  let o = 0;
  for (const e of events) {
    numbers[o++] = e.timeMs;
    numbers[o++] = ref(e.requestId ?? "");
    numbers[o++] = ref(e.workspaceId);
    numbers[o++] = ref(e.keySpaceId);
    numbers[o++] = ref(e.keyId);
    numbers[o++] = ref(e.identityId);
    numbers[o++] = ref(e.externalId);
    numbers[o++] = ref(e.outcome);
    numbers[o++] = ref(storedTags(e.tags));
    numbers[o++] = e.spentCredits;
    numbers[o++] = e.latencyMs;
  }
  return { numbers, strings };
}

/** How many events `p` holds. */
export function packedCount(p: PackedEvents): number {
  return p.numbers.length / FIELDS;
}

/** The events of `p`, as stored. */
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
