import { describe, expect, test } from "bun:test";
import { ColumnArrays, storedEvents } from "../../../src/services/analytics/columns.ts";
import { EventBuffer } from "../../../src/services/analytics/event-buffer.ts";
import { toStored, type EventSubject, type VerificationEvent } from "../../../src/services/analytics/types.ts";
import { event } from "./support.ts";

/** A subject that counts how often its strings are read. */
function countingSubject(keyId: string): { subject: EventSubject; reads: () => number } {
  let reads = 0;
  const fields = { workspaceId: "ws_a", keySpaceId: "ks_a", keyId, identityId: "id_1", externalId: "acme" };
  const subject = {} as EventSubject;
  for (const [name, value] of Object.entries(fields)) {
    Object.defineProperty(subject, name, { get: () => { reads++; return value; }, enumerable: true });
  }
  return { subject, reads: () => reads };
}

const stored = (buffer: EventBuffer) => storedEvents(buffer.take());

describe("EventBuffer", () => {
  test("a subject's strings are read once per dictionary: its later events reuse their references", () => {
    const buffer = new EventBuffer({ capacity: 4, maxStrings: 12 });
    const { subject, reads } = countingSubject("key_1");
    for (let i = 0; i < 3; i++) buffer.put({ ...event({ latencyMs: i }), subject });
    expect(reads()).toBe(5);
    expect(stored(buffer).map((e) => [e.keyId, e.identityId, e.externalId, e.latencyMs])).toEqual([0, 1, 2].map((i) => ["key_1", "id_1", "acme", i]));
    // Past the dictionary's bound (other keys' strings), the next dictionary interns the subject again.
    for (let i = 0; i < 10; i++) buffer.put(event({ keyId: `key_other_${i}` }));
    buffer.take();
    buffer.put({ ...event(), subject });
    expect(reads()).toBe(10);
    expect(stored(buffer).map((e) => e.keyId)).toEqual(["key_1"]);
  });

  test("past the subjects it remembers it forgets them and goes on encoding every event right", () => {
    const buffer = new EventBuffer({ capacity: 8, maxSubjects: 2 });
    const subjects = Array.from({ length: 5 }, (_, i) => event({ keyId: `key_${i}`, identityId: `id_${i}` }).subject);
    const events: VerificationEvent[] = [];
    for (let round = 0; round < 3; round++) for (const subject of subjects) events.push({ ...event({ latencyMs: round }), subject });
    for (const e of events) buffer.put(e);
    expect(stored(buffer)).toEqual(events.map(toStored));
  });

  test("grows past its capacity; take hands over the events and leaves it empty, the taken columns untouched by later events", () => {
    const buffer = new EventBuffer({ capacity: 2 });
    const first = Array.from({ length: 5 }, (_, i) => event({ keyId: `key_${i}`, requestId: i === 3 ? "req_3" : undefined }));
    for (const e of first) buffer.put(e);
    expect(buffer.count).toBe(5);
    const taken = buffer.take();
    expect(buffer.count).toBe(0);
    buffer.put(event({ keyId: "key_later" }));
    expect(storedEvents(taken)).toEqual(first.map(toStored));
    expect(taken.requestIds).toEqual(["", "", "", "req_3", ""]);
    expect(stored(buffer).map((e) => e.keyId)).toEqual(["key_later"]);
  });

  test("after a take, its new columns hold a quarter more than the batch taken (the capacity at least), so a steady flow does not grow them", () => {
    const asked: number[] = [];
    class Recording extends ColumnArrays {
      override take(events: number) {
        asked.push(events);
        return super.take(events);
      }
    }
    const buffer = new EventBuffer({ capacity: 4, arrays: new Recording(1) });
    for (let i = 0; i < 100; i++) buffer.put(event({ keyId: `key_${i}` }));
    buffer.take();
    const afterFirst = asked.length;
    for (let i = 0; i < 125; i++) buffer.put(event({ keyId: `key_${i}` }));
    buffer.put(event());
    buffer.take();
    // 100 taken: columns for 125, filled without growing until the 126th; then 126 taken, and one.
    expect(asked.slice(afterFirst - 1)).toEqual([125, 250, 157]);
    buffer.put(event());
    buffer.take();
    expect(asked.at(-1)).toBe(4);
  });

  test("putAhead buffers events given back before those buffered since", () => {
    const buffer = new EventBuffer({ capacity: 4 });
    buffer.put(event({ keyId: "newer_1", requestId: "r_n1" }));
    buffer.put(event({ keyId: "newer_2" }));
    buffer.putAhead([event({ keyId: "back_1" }), event({ keyId: "back_2", requestId: "r_b2" })]);
    const events = stored(buffer);
    expect(events.map((e) => e.keyId)).toEqual(["back_1", "back_2", "newer_1", "newer_2"]);
    expect(events.map((e) => e.requestId)).toEqual(["", "r_b2", "r_n1", ""]);
  });

  test("dropOldest drops the oldest events with their request ids", () => {
    const buffer = new EventBuffer({ capacity: 4 });
    for (let i = 0; i < 6; i++) buffer.put(event({ keyId: `key_${i}`, requestId: `req_${i}`, latencyMs: i }));
    buffer.dropOldest(4);
    expect(buffer.count).toBe(2);
    expect(stored(buffer).map((e) => [e.keyId, e.requestId, e.latencyMs])).toEqual([["key_4", "req_4", 4], ["key_5", "req_5", 5]]);
  });
});
