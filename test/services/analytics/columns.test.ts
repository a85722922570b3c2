/** Event columns (columns.ts): what the writer thread orders, aggregates and stores. */
import { describe, expect, test } from "bun:test";
import { ColumnArrays, ColumnStage, columnsOf, inOrder, NUMBERS_PER_EVENT, REFS_PER_EVENT, storedEventAt, storedEvents } from "../../../src/services/analytics/columns.ts";
import { toStored } from "../../../src/services/analytics/types.ts";
import { event } from "./support.ts";

const stored = (n: number, over: Parameters<typeof event>[0] = {}) =>
  Array.from({ length: n }, (_, i) => toStored(event({ keyId: `key_${i % 3}`, timeMs: event().timeMs + i, latencyMs: i / 8, ...over })));

describe("columnsOf", () => {
  test("holds every field of every event, each distinct string once", () => {
    const events = [...stored(5), ...stored(2, { requestId: "req_x", tags: ["a"], identityId: "id_1", externalId: "acme" })];
    const c = columnsOf(events);
    expect(c.count).toBe(7);
    expect(storedEvents(c)).toEqual(events);
    expect(storedEventAt(c, 6)).toEqual(events[6]!);
    expect(new Set(c.strings).size).toBe(c.strings.length);
    expect(c.requestIds).toEqual(events.map((e) => e.requestId));
  });

  test("no request ids at all: none are kept, and each reads back as ''", () => {
    const c = columnsOf(stored(3));
    expect(c.requestIds).toBeUndefined();
    expect(storedEvents(c).map((e) => e.requestId)).toEqual(["", "", ""]);
    expect(columnsOf([]).count).toBe(0);
    expect([...inOrder(4)]).toEqual([0, 1, 2, 3]);
  });
});

describe("ColumnStage", () => {
  /** Columns of `events` over one shared dictionary, as the writer's decoder makes them. */
  const shared = (batches: ReturnType<typeof stored>[]) => {
    const all = columnsOf(batches.flat());
    let from = 0;
    return batches.map((b) => {
      const part = {
        ...all, count: b.length,
        refs: all.refs.slice(from * 7, (from + b.length) * 7), numbers: all.numbers.slice(from * 3, (from + b.length) * 3),
        requestIds: all.requestIds?.slice(from, from + b.length),
      };
      from += b.length;
      return part;
    });
  };

  test("appends batches into one set of columns, request ids lined up even when only a later batch has them", () => {
    const first = stored(700);
    const second = stored(900, { requestId: "req_late" });
    const third = stored(3);
    const stage = new ColumnStage();
    for (const part of shared([first, second, third])) stage.append(part);
    expect(stage.count).toBe(1603);
    expect(storedEvents(stage.columns())).toEqual([...first, ...second, ...third]);
  });

  test("after clear it starts empty and keeps its buffers; another dictionary is refused while events are staged", () => {
    const stage = new ColumnStage();
    const [a] = shared([stored(2000)]);
    stage.append(a!);
    const buffer = stage.columns().refs.buffer;
    stage.clear();
    expect(stage.count).toBe(0);
    expect(stage.dictionary).toBeUndefined();
    const [b] = shared([stored(10, { outcome: "DISABLED" })]);
    stage.append(b!);
    expect(stage.columns().refs.buffer).toBe(buffer);
    expect(storedEvents(stage.columns())).toEqual(stored(10, { outcome: "DISABLED" }));
    expect(() => stage.append(columnsOf(stored(1)))).toThrow("another dictionary");
    expect(stage.count).toBe(10);
  });
});

describe("ColumnArrays", () => {
  test("a pair given back is taken again for a batch it fits, and kept for a later one when it does not", () => {
    const arrays = new ColumnArrays(8, 4);
    const small = arrays.take(3);
    expect(small.numbers.length).toBe(8 * NUMBERS_PER_EVENT);
    expect(small.refs.length).toBe(8 * REFS_PER_EVENT);
    // Given back as views, as a batch's columns are.
    arrays.give(small.refs.subarray(0, 3 * REFS_PER_EVENT), small.numbers.subarray(0, 3 * NUMBERS_PER_EVENT));
    expect(arrays.spares).toBe(1);
    const big = arrays.take(20);
    expect(big.numbers.length).toBe(20 * NUMBERS_PER_EVENT);
    expect(arrays.spares).toBe(1);
    const again = arrays.take(5);
    expect(again.refs.buffer).toBe(small.refs.buffer);
    expect(again.numbers.length).toBe(8 * NUMBERS_PER_EVENT);
    expect(arrays.spares).toBe(0);
  });

  test("keeps a bounded number of spares, and none whose buffer was transferred away", () => {
    const arrays = new ColumnArrays(4, 2);
    const pairs = [arrays.take(1), arrays.take(1), arrays.take(1)];
    for (const p of pairs) arrays.give(p.refs, p.numbers);
    expect(arrays.spares).toBe(2);
    const taken = arrays.take(1);
    structuredClone(taken.refs.buffer, { transfer: [taken.refs.buffer] });
    arrays.give(taken.refs, taken.numbers);
    expect(arrays.spares).toBe(1);
  });

  test("copy holds the columns' values in a pair of its own, taken back with give", () => {
    const arrays = new ColumnArrays(4, 2);
    const events = [event({ keyId: "k1", latencyMs: 2 }), event({ keyId: "k2", spentCredits: 3 })].map(toStored);
    const c = columnsOf(events);
    const copy = arrays.copy(c);
    expect(copy.refs.buffer).not.toBe(c.refs.buffer);
    expect(storedEvents(copy)).toEqual(events);
    arrays.give(copy.refs, copy.numbers);
    expect(arrays.take(2).refs.buffer).toBe(copy.refs.buffer as ArrayBuffer);
  });
});
