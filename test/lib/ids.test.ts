/** Identifiers: random ones, and the sequences used for request ids. */
import { expect, test } from "bun:test";
import { idSequence, newId } from "../../src/lib/ids.ts";

const BASE58_ID = /^[a-z]+_[1-9A-HJ-NP-Za-km-z]+$/;

test("newId is the prefix and 16 base58 characters, different every time", () => {
  const ids = Array.from({ length: 1000 }, () => newId("key"));
  for (const id of ids) expect(id).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]{16}$/);
  expect(new Set(ids).size).toBe(ids.length);
});

test("an id sequence never repeats, keeps to base58, and two sequences share no id", () => {
  const a = idSequence("req");
  const b = idSequence("req");
  const ids = Array.from({ length: 200_000 }, () => a());
  for (const id of [ids[0]!, ids[57]!, ids[58]!, ids[3363]!, ids[3364]!, ids[199_999]!]) expect(id).toMatch(BASE58_ID);
  const seen = new Set(ids);
  expect(seen.size).toBe(ids.length);
  // The counter part: 0, 57 and 58 are "1", "z" and "21" after the sequence's random part.
  const base = ids[0]!.slice(0, -1);
  expect([ids[0], ids[57], ids[58], ids[3364]]).toEqual([`${base}1`, `${base}z`, `${base}21`, `${base}211`]);
  const other = Array.from({ length: 1000 }, () => b());
  expect(other.filter((id) => seen.has(id))).toEqual([]);
});
