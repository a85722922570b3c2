import { describe, expect, test } from "bun:test";
import { aggregate, bucketStartMs, totalsOf, type RollupRow, type TotalRow } from "../../../src/services/analytics/index.ts";

const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => Date.UTC(y, mo - 1, d, h, mi, s, ms);

describe("bucketStartMs: UTC bucket starts", () => {
  const t = utc(2026, 3, 15, 13, 47, 29, 512);
  test.each([
    ["minute", utc(2026, 3, 15, 13, 47)],
    ["hour", utc(2026, 3, 15, 13)],
    ["day", utc(2026, 3, 15)],
    ["month", utc(2026, 3, 1)],
  ] as const)("%s", (granularity, start) => {
    expect(bucketStartMs(granularity, t)).toBe(start);
  });

  test("a bucket start is its own bucket; the last millisecond belongs to the bucket before", () => {
    expect(bucketStartMs("minute", utc(2026, 1, 1, 0, 1))).toBe(utc(2026, 1, 1, 0, 1));
    expect(bucketStartMs("hour", utc(2026, 1, 1, 1) - 1)).toBe(utc(2026, 1, 1, 0));
    expect(bucketStartMs("day", utc(2026, 1, 2) - 1)).toBe(utc(2026, 1, 1));
    expect(bucketStartMs("month", utc(2026, 3, 1) - 1)).toBe(utc(2026, 2, 1));
  });

  test("months of every length, leap February, and the year boundary", () => {
    expect(bucketStartMs("month", utc(2028, 2, 29, 23, 59, 59, 999))).toBe(utc(2028, 2, 1));
    expect(bucketStartMs("month", utc(2026, 12, 31, 23, 59))).toBe(utc(2026, 12, 1));
    expect(bucketStartMs("month", utc(2027, 1, 1))).toBe(utc(2027, 1, 1));
    expect(bucketStartMs("month", utc(2026, 4, 30, 12))).toBe(utc(2026, 4, 1));
  });

  test("before 1970 too (negative Unix ms)", () => {
    expect(bucketStartMs("day", utc(1969, 12, 31, 18))).toBe(utc(1969, 12, 31));
    expect(bucketStartMs("minute", -1)).toBe(-60_000);
  });
});

describe("aggregate", () => {
  const base = {
    requestId: "", workspaceId: "ws", keySpaceId: "ks", keyId: "key_1", identityId: "", externalId: "", outcome: "VALID", tags: "[]", spentCredits: 0, latencyMs: 1,
  };

  test("one row per bucket, key, identity, outcome and tags; counts, credits and latency summed, latency max kept", () => {
    const rows = aggregate([
      { ...base, timeMs: utc(2026, 1, 1, 0, 0, 1), spentCredits: 2, latencyMs: 1.5 },
      { ...base, timeMs: utc(2026, 1, 1, 0, 0, 59), spentCredits: 3, latencyMs: 4 },
      { ...base, timeMs: utc(2026, 1, 1, 0, 1, 0) },
      { ...base, timeMs: utc(2026, 1, 1, 0, 0, 2), outcome: "RATE_LIMITED" },
      { ...base, timeMs: utc(2026, 1, 1, 0, 0, 3), tags: '["a"]' },
      { ...base, timeMs: utc(2026, 1, 1, 0, 0, 4), keyId: "key_2" },
      { ...base, timeMs: utc(2026, 1, 1, 0, 0, 5), identityId: "id_1", externalId: "acme" },
    ], "minute");
    const byId = (r: RollupRow) => `${r.time}|${r.keyId}|${r.identityId}|${r.outcome}|${r.tags}`;
    expect(new Map(rows.map((r) => [byId(r), [r.count, r.spentCredits, r.latencySumMs, r.latencyMaxMs]]))).toEqual(new Map([
      [`${utc(2026, 1, 1)}|key_1||VALID|[]`, [2, 5, 5.5, 4]],
      [`${utc(2026, 1, 1, 0, 1)}|key_1||VALID|[]`, [1, 0, 1, 1]],
      [`${utc(2026, 1, 1)}|key_1||RATE_LIMITED|[]`, [1, 0, 1, 1]],
      [`${utc(2026, 1, 1)}|key_1||VALID|["a"]`, [1, 0, 1, 1]],
      [`${utc(2026, 1, 1)}|key_2||VALID|[]`, [1, 0, 1, 1]],
      [`${utc(2026, 1, 1)}|key_1|id_1|VALID|[]`, [1, 0, 1, 1]],
    ]));
    expect(rows.find((r) => r.identityId === "id_1")?.externalId).toBe("acme");
  });

  test("the same events in a coarser bucket fold together", () => {
    const events = [0, 59, 61, 3599].map((s) => ({ ...base, timeMs: utc(2026, 5, 5, 7) + s * 1000 }));
    expect(aggregate(events, "minute")).toHaveLength(3);
    expect(aggregate(events, "hour").map((r) => [r.time, r.count])).toEqual([[utc(2026, 5, 5, 7), 4]]);
  });

  test("events of the same dimensions apart from each other, and out of time order, share their rows", () => {
    const m = (minute: number, second = 0) => utc(2026, 1, 1, 0, minute, second);
    const events = [
      { ...base, timeMs: m(1) }, { ...base, timeMs: m(2) }, { ...base, keyId: "key_2", timeMs: m(1) },
      { ...base, timeMs: m(1, 30), spentCredits: 4 }, { ...base, keyId: "key_2", timeMs: m(1, 5) },
      { ...base, timeMs: m(0, 10) }, { ...base, timeMs: m(2, 59), latencyMs: 9 }, { ...base, timeMs: m(1, 59) },
    ];
    const rows = aggregate(events, "minute");
    expect(rows.map((r) => [r.keyId, r.time, r.count, r.spentCredits, r.latencyMaxMs]).sort()).toEqual([
      ["key_1", m(0), 1, 0, 1], ["key_1", m(1), 3, 4, 1], ["key_1", m(2), 2, 0, 9], ["key_2", m(1), 2, 0, 1],
    ].sort());
    expect(aggregate(events, "hour").map((r) => [r.keyId, r.count]).sort()).toEqual([["key_1", 6], ["key_2", 2]]);
  });

  test("no events, no rows", () => {
    expect(aggregate([], "day")).toEqual([]);
  });
});

describe("totalsOf", () => {
  test("minute rows summed into each granularity's buckets equal the totals of that granularity's rows", () => {
    const start = utc(2026, 1, 31, 22);
    const events = Array.from({ length: 500 }, (_, i) => ({
      requestId: "", timeMs: start + Math.floor(i / 3) * 18_007_000 + (i % 3) * 15_000, workspaceId: "ws", keySpaceId: i % 4 ? "ks_a" : "ks_b", keyId: `key_${i % 7}`, identityId: i % 3 === 0 ? "id_1" : "",
      externalId: i % 3 === 0 ? "acme" : "", outcome: i % 5 === 0 ? "RATE_LIMITED" : "VALID", tags: i % 2 === 0 ? "[]" : '["a"]', spentCredits: i % 4, latencyMs: (i % 9) / 4,
    }));
    const minutes = aggregate(events, "minute");
    const sorted = (rows: TotalRow[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    for (const granularity of ["minute", "hour", "day", "month"] as const) {
      expect(sorted(totalsOf(minutes, granularity))).toEqual(sorted(totalsOf(aggregate(events, granularity))));
    }
    expect(totalsOf(minutes, "month").map((r) => r.time).filter((t, i, all) => all.indexOf(t) === i).sort()).toEqual([utc(2026, 1, 1), utc(2026, 2, 1), utc(2026, 3, 1)]);
  });
});

describe("aggregate and totalsOf against a plain reference", () => {
  // A small seeded generator, so a failure repeats.
  const random = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)]!;

  function events(seed: number, count: number, tagSets: number) {
    const next = random(seed);
    const start = utc(2026, 5, 31, 23, 58);
    return Array.from({ length: count }, () => ({
      requestId: "", timeMs: start + Math.floor(next() * 5 * 60_000), workspaceId: pick(next, ["ws_1", "ws_2"]), keySpaceId: pick(next, ["ks_1", "ks_2", "ks_3"]),
      keyId: pick(next, ["key_1", "key_2", "key_3"]), identityId: pick(next, ["", "id_1"]), externalId: "", outcome: pick(next, ["VALID", "RATE_LIMITED", "DISABLED"]),
      tags: `["t${Math.floor(next() * tagSets)}"]`, spentCredits: Math.floor(next() * 3), latencyMs: next(),
    }));
  }

  const sorted = <T>(rows: T[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

  // Many tag sets per key, so each key holds far more rows than are scanned before they are indexed.
  test.each([[1, 200, 2], [2, 3000, 400], [3, 5000, 5000]])("seed %i: %i events over %i tag sets", (seed, count, tagSets) => {
    const all = events(seed, count, tagSets);
    for (const granularity of ["minute", "hour", "day", "month"] as const) {
      const want = new Map<string, RollupRow>();
      for (const e of all) {
        const time = bucketStartMs(granularity, e.timeMs);
        const id = JSON.stringify([time, e.workspaceId, e.keySpaceId, e.keyId, e.identityId, e.outcome, e.tags]);
        const row = want.get(id);
        if (row) {
          row.count++;
          row.spentCredits += e.spentCredits;
          row.latencySumMs += e.latencyMs;
          row.latencyMaxMs = Math.max(row.latencyMaxMs, e.latencyMs);
        } else {
          want.set(id, { time, workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId, identityId: e.identityId, externalId: e.externalId, outcome: e.outcome, tags: e.tags, count: 1, spentCredits: e.spentCredits, latencySumMs: e.latencyMs, latencyMaxMs: e.latencyMs });
        }
      }
      const rows = aggregate(all, granularity);
      expect(sorted(rows)).toEqual(sorted([...want.values()]));
      const totals = new Map<string, TotalRow>();
      for (const r of want.values()) {
        const id = JSON.stringify([r.time, r.workspaceId, r.keySpaceId, r.outcome]);
        const t = totals.get(id);
        if (t) {
          t.count += r.count;
          t.spentCredits += r.spentCredits;
        } else {
          totals.set(id, { time: r.time, workspaceId: r.workspaceId, keySpaceId: r.keySpaceId, outcome: r.outcome, count: r.count, spentCredits: r.spentCredits });
        }
      }
      expect(sorted(totalsOf(rows))).toEqual(sorted([...totals.values()]));
      // The coarser totals as the writer makes them: from the minute totals.
      expect(sorted(totalsOf(totalsOf(aggregate(all, "minute")), granularity))).toEqual(sorted([...totals.values()]));
    }
  });
});
