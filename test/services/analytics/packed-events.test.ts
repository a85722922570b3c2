/** Events packed as recorded come back as stored for the writer, and as recorded for a failed write; each distinct string but request ids is listed once. */
import { describe, expect, test } from "bun:test";
import { toStored } from "./support.ts";
import { EventPacker, packedCount, unpackEvents, unpackRecords } from "../../../src/services/analytics/packed-events.ts";
import { packEvents } from "./support.ts";
import { event } from "./support.ts";

describe("packEvents / unpackEvents", () => {
  test("every field comes back as stored: tags sorted as JSON, no request id as '', fractional latency and large credits exact", () => {
    const events = [
      event({ requestId: "req_1", keyId: "key_1", identityId: "id_1", externalId: "ext_1", outcome: "DISABLED", tags: ["b", "a"], spentCredits: 1e12 + 7, latencyMs: 0.125 }),
      event({ keyId: "key_2", timeMs: Date.UTC(2027, 0, 1) + 999, tags: [] }),
      event({ keyId: "ключ \"quoted\" \u0000", externalId: "😀" }),
    ];
    const packed = packEvents(events);
    expect(packedCount(packed)).toBe(3);
    expect(unpackEvents(packed)).toEqual(events.map(toStored));
    expect(unpackEvents(packed)[0]!.tags).toBe('["a","b"]');
  });

  test("a string shared by many events is listed once; request ids follow the list in the same text", () => {
    const events = Array.from({ length: 1000 }, (_, i) => event({ keyId: `key_${i % 3}`, requestId: `req_${i}` }));
    const packed = packEvents(events);
    expect(Object.keys(packed).sort()).toEqual(["lengths", "numbers", "text"]);
    // '' (identity, external id), the workspace, the key space, three keys, the outcome and '[]'.
    expect(packed.lengths.length).toBe(8);
    expect(packed.text.endsWith(events.map((e) => e.requestId).join(""))).toBe(true);
    expect(unpackEvents(packed).map((e) => [e.keyId, e.requestId])).toEqual(events.map((e) => [e.keyId, e.requestId ?? ""]));
  });

  test("events given back after a failed write are the records verification made (tags as a list)", () => {
    const events = [event({ keyId: "k1", tags: ["x"] }), event({ keyId: "k2", requestId: "r2" }), event({ keyId: "k3" })];
    expect(unpackRecords(packEvents(events), [2, 0])).toEqual([{ ...events[2]!, requestId: "" }, { ...events[0]!, requestId: "" }]);
  });

  test("a packer grows past its first array and starts empty after each take", () => {
    const packer = new EventPacker();
    const many = Array.from({ length: 5000 }, (_, i) => event({ keyId: `key_${i}` }));
    for (const e of many) packer.add(e);
    const first = packer.take();
    expect(unpackEvents(first).map((e) => e.keyId)).toEqual(many.map((e) => e.keyId));
    expect(packer.length).toBe(0);
    packer.add(event({ keyId: "after" }));
    const second = packer.take();
    expect(unpackEvents(second).map((e) => e.keyId)).toEqual(["after"]);
    // The first batch is a copy: the packer's reuse of its array leaves it as it was.
    expect(unpackEvents(first)[0]!.keyId).toBe("key_0");
  });

  test("no events: an empty batch", () => {
    expect(unpackEvents(packEvents([]))).toEqual([]);
  });
});
