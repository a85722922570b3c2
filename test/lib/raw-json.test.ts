/**
 * jsonText: the same JSON as JSON.stringify, with the text of each RawJson in a marked value put in
 * as it is (never parsed), and JSON.stringify itself for anything unmarked.
 */
import { describe, expect, test } from "bun:test";
import { jsonText, markHoldsRawJson, RawJson } from "../../src/lib/raw-json.ts";

const meta = { plan: "pro", nested: { list: [1, "two", null, { three: 3 }] }, text: "«ü» \"q\" \\ \n \u2028" };

describe("jsonText", () => {
  test("a marked value: RawJson text spliced in, at the top and in nested plain objects; the same JSON as the parsed value", () => {
    const raw = new RawJson(JSON.stringify(meta));
    const value = markHoldsRawJson({ valid: true, code: "VALID", meta: raw, identity: { id: "id_1", meta: raw }, roles: ["a", "b"] });
    const text = jsonText(value);
    expect(text).toBe(JSON.stringify({ valid: true, code: "VALID", meta, identity: { id: "id_1", meta }, roles: ["a", "b"] }));
  });

  test("a marked list page: the array is walked, each item's RawJson spliced in as it is, the same JSON as the parsed items", () => {
    const raw = new RawJson('{"spacing" :  [1, 2]}');
    const page = markHoldsRawJson([{ id: "id_1", meta: raw }, { id: "id_2", meta: {} }, raw]);
    expect(jsonText(page)).toBe('[{"id":"id_1","meta":{"spacing" :  [1, 2]}},{"id":"id_2","meta":{}},{"spacing" :  [1, 2]}]');
    expect(JSON.parse(jsonText(page))).toEqual(JSON.parse(JSON.stringify(page)));
  });

  test("the text goes in as it is: a RawJson in a marked value is never parsed", () => {
    const raw = new RawJson('{"spacing" :  [1, 2]}');
    expect(jsonText(markHoldsRawJson({ meta: raw }))).toBe('{"meta":{"spacing" :  [1, 2]}}');
  });

  test("members JSON.stringify leaves out are left out; dates, arrays and empty objects as JSON.stringify writes them", () => {
    const value = { a: undefined, b: () => 1, c: Symbol("c"), d: new Date(0), e: [undefined, () => 1, new RawJson("[1]")], f: {}, g: Number.NaN, "h\"k": 1 };
    expect(jsonText(markHoldsRawJson({ ...value }))).toBe(JSON.stringify(value));
  });

  test("an unmarked value is JSON.stringify's; a RawJson there serialises as its parsed value", () => {
    const value = { meta: new RawJson('{"spacing" :  [1, 2]}') };
    expect(jsonText(value)).toBe('{"meta":{"spacing":[1,2]}}');
    expect(jsonText([1, "a"])).toBe('[1,"a"]');
    expect(jsonText("text")).toBe('"text"');
  });

  test("the mark is invisible to JSON.stringify and to the object's keys", () => {
    const value = markHoldsRawJson({ a: 1 });
    expect(JSON.stringify(value)).toBe('{"a":1}');
    expect(Object.keys(value)).toEqual(["a"]);
  });
});
