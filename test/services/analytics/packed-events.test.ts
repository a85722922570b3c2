/** Events packed for the writer thread come back as stored, each distinct string carried once. */
import { describe, expect, test } from "bun:test";
import { packedCount, packEvents, toStored, unpackEvents } from "../../../src/services/analytics/types.ts";
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

  test("a string shared by many events is carried once", () => {
    const packed = packEvents(Array.from({ length: 1000 }, (_, i) => event({ keyId: `key_${i % 3}` })));
    // '' (request, identity, external id), the workspace, the key space, three keys, the outcome and '[]'.
    expect(packed.strings.length).toBe(8);
    expect(packedCount(packed)).toBe(1000);
  });

  test("no events: an empty batch", () => {
    expect(unpackEvents(packEvents([]))).toEqual([]);
  });
});
