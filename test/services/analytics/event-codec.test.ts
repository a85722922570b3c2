import { describe, expect, test } from "bun:test";
import { storedEvents } from "../../../src/services/analytics/columns.ts";
import { EventBuffer } from "../../../src/services/analytics/event-buffer.ts";
import { EventDecoder, EventEncoder, eventsOf, fromStored, type EncodedEvents } from "../../../src/services/analytics/event-codec.ts";
import { toStored, type VerificationEvent } from "../../../src/services/analytics/types.ts";
import { batchOf, event } from "./support.ts";

const varied: VerificationEvent[] = [
  event(),
  event({ keyId: "key_b", identityId: "id_1", externalId: "acme", outcome: "RATE_LIMITED", spentCredits: 3, latencyMs: 0.123456789 }),
  event({ tags: ["region=eu", "path=/b", "path=/a"], requestId: "req_1", timeMs: event().timeMs + 61_000 }),
  event({ tags: ["solo"] }),
  event({ tags: ['["a","b"]'] }),
  event({ tags: ["a", "b"] }),
];

/** The events of a message as the writer's columns hold them, as objects. */
const decoded = (decoder: EventDecoder, message: EncodedEvents) => storedEvents(decoder.decode(message));

describe("EventEncoder and EventDecoder", () => {
  test("a batch decodes to the events as stored: every field, tags sorted into JSON, '' for no request id", () => {
    const events = decoded(new EventDecoder(), new EventEncoder().encode(batchOf(varied)));
    expect(events).toEqual(varied.map(toStored));
    // A one-tag set whose tag reads like a JSON list is not the list.
    expect(events[4]!.tags).toBe('["[\\"a\\",\\"b\\"]"]');
    expect(events[5]!.tags).toBe('["a","b"]');
  });

  test("a string crosses once: a later batch of the same events brings no strings and decodes the same", () => {
    const buffer = new EventBuffer({ capacity: 4 });
    const encoder = new EventEncoder();
    const decoder = new EventDecoder();
    const first = encoder.encode(batchOf(varied, buffer));
    expect(first.reset).toBe(true);
    expect(first.strings.filter((s) => s === "key_a")).toHaveLength(1);
    decoder.decode(first);
    const second = encoder.encode(batchOf(varied, buffer));
    expect(second.reset).toBe(false);
    expect(second.strings).toEqual([]);
    expect(decoded(decoder, second)).toEqual(varied.map(toStored));
  });

  test("a new encoder (a new writer thread) starts its decoder over with every string of the dictionary", () => {
    const buffer = new EventBuffer({ capacity: 4 });
    new EventEncoder().encode(batchOf(varied, buffer));
    const message = new EventEncoder().encode(batchOf([varied[1]!], buffer));
    expect(message.reset).toBe(true);
    expect(message.strings).toContain("key_a");
    expect(decoded(new EventDecoder(), message)).toEqual([toStored(varied[1]!)]);
  });

  test("request ids, which never repeat, stay out of the dictionary and still decode with their events", () => {
    const buffer = new EventBuffer({ capacity: 4 });
    const encoder = new EventEncoder();
    const decoder = new EventDecoder();
    decoder.decode(encoder.encode(batchOf(varied, buffer)));
    const fresh = varied.map((e, i) => ({ ...e, requestId: `req_fresh_${i}` }));
    const batch = batchOf(fresh, buffer);
    expect(batch.strings.some((s) => s.startsWith("req_"))).toBe(false);
    const message = encoder.encode(batch);
    expect(message.strings).toEqual([]);
    expect(decoder.size).toBe(batch.strings.length);
    expect(decoded(decoder, message)).toEqual(fresh.map(toStored));
  });

  test("past its bound the dictionary starts over on both sides, and every batch still decodes", () => {
    const buffer = new EventBuffer({ capacity: 10, maxStrings: 20 });
    const encoder = new EventEncoder();
    const decoder = new EventDecoder();
    const resets: boolean[] = [];
    const kept: { columns: ReturnType<EventDecoder["decode"]>; events: VerificationEvent[] }[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const events = Array.from({ length: 10 }, (_, i) => event({ keyId: `key_${batch}_${i}`, tags: [`t${batch}`] }));
      const message = encoder.encode(batchOf(events, buffer));
      resets.push(message.reset);
      const columns = decoder.decode(message);
      kept.push({ columns, events });
      expect(storedEvents(columns)).toEqual(events.map(toStored));
      expect(decoder.size).toBeLessThanOrEqual(20 + 10 * 8);
    }
    expect(resets).toEqual([true, false, true, false, true, false]);
    // Columns decoded before a reset keep their dictionary: a batch the writer still holds reads the same.
    for (const { columns, events } of kept) expect(storedEvents(columns)).toEqual(events.map(toStored));
    expect(kept[0]!.columns.strings).toBe(kept[1]!.columns.strings);
    expect(kept[1]!.columns.strings).not.toBe(kept[2]!.columns.strings);
  });

  test("an empty batch is an empty message", () => {
    const message = new EventEncoder().encode(batchOf([]));
    expect(message.refs.length + message.numbers.length).toBe(0);
    expect(decoded(new EventDecoder(), message)).toEqual([]);
  });

  test("a batch without request ids sends none, and its events decode with ''", () => {
    const plain = varied.map(({ requestId: _, ...e }) => e);
    const message = new EventEncoder().encode(batchOf(plain));
    expect(message.requestIds).toBe("");
    expect(decoded(new EventDecoder(), message).map((e) => e.requestId)).toEqual(plain.map(() => ""));
  });
});

describe("fromStored and eventsOf", () => {
  test("give back events that store the same", () => {
    for (const e of varied) expect(toStored(fromStored(toStored(e)))).toEqual(toStored(e));
    expect(eventsOf(batchOf(varied)).map(toStored)).toEqual(varied.map(toStored));
  });
});
