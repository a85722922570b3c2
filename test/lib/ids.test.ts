/** Identifiers: a prefix and random base58 characters, each drawn uniformly. */
import { expect, test } from "bun:test";
import { newId, randomBase58 } from "../../src/lib/ids.ts";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

test("newId is the prefix and 16 base58 characters, different every time", () => {
  const ids = Array.from({ length: 10_000 }, () => newId("req"));
  for (const id of ids) expect(id).toMatch(/^req_[1-9A-HJ-NP-Za-km-z]{16}$/);
  expect(new Set(ids).size).toBe(ids.length);
});

test("randomBase58 gives exactly the length asked for, and every character of the alphabet about equally often", () => {
  for (const count of [0, 1, 7, 16, 100]) expect(randomBase58(count)).toHaveLength(count);
  const counts = new Map<string, number>();
  for (let i = 0; i < 2000; i++) for (const c of randomBase58(58)) counts.set(c, (counts.get(c) ?? 0) + 1);
  expect([...counts.keys()].sort()).toEqual([...ALPHABET].sort());
  // 2,000 expected per character; a fair draw stays within ±15% (over 6 standard deviations).
  for (const n of counts.values()) expect(Math.abs(n - 2000)).toBeLessThan(300);
});
