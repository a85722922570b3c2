/** The page byte budget's arithmetic: at least one item, the cursor at the first item left out, stored texts measured as they are. */
import { describe, expect, test } from "bun:test";
import { countWithinBudget, fitPage, jsonBytes, planPage } from "../../src/services/pages/index.ts";
import { RawJson } from "../../src/lib/raw-json.ts";

describe("countWithinBudget", () => {
  test("items fit while their bytes and a separator each stay within the budget; the first always, however large", () => {
    expect(countWithinBudget([], 10)).toBe(0);
    expect(countWithinBudget([50], 10)).toBe(1);
    expect(countWithinBudget([4, 4, 4], 10)).toBe(2);
    expect(countWithinBudget([4, 4], 10)).toBe(2);
    expect(countWithinBudget([8, 0], 10)).toBe(2);
    expect(countWithinBudget([9, 1], 10)).toBe(1);
  });
});

describe("planPage", () => {
  test("plans up to `limit` rows within the budget: the last planned id, the next page's first id and each one's size", () => {
    const sized = [{ id: "a", bytes: 4 }, { id: "b", bytes: 4 }, { id: "c", bytes: 4 }];
    expect(planPage(sized, 2, 100)).toEqual({ until: "b", next: "c", storedBytes: new Map([["a", 4], ["b", 4]]) });
    expect(planPage(sized, 3, 9)).toEqual({ until: "a", next: "b", storedBytes: new Map([["a", 4]]) });
    expect(planPage(sized.slice(0, 2), 3, 100)).toEqual({ until: "b", next: undefined, storedBytes: new Map([["a", 4], ["b", 4]]) });
    expect(planPage([], 3, 100)).toEqual({ until: undefined, next: undefined, storedBytes: new Map() });
  });
});

describe("fitPage", () => {
  test("cuts the built items at the budget with the first item left out as the cursor, else the plan's next", () => {
    const items = [{ id: "a", n: 4 }, { id: "b", n: 4 }, { id: "c", n: 4 }];
    const page = (budget: number, next?: string) => fitPage(items, (i) => i.id, (i) => i.n, budget, next);
    expect(page(9, "d")).toEqual({ items: items.slice(0, 1), cursor: "b" });
    expect(page(100, "d")).toEqual({ items, cursor: "d" });
    expect(page(100)).toEqual({ items, cursor: undefined });
  });
});

describe("jsonBytes", () => {
  test("UTF-8 bytes of the JSON text; a stored text as it is, unparsed", () => {
    expect(jsonBytes({ a: "é" })).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(jsonBytes(undefined)).toBe(0);
    expect(jsonBytes(new RawJson('{"a" :  "✓"}'))).toBe(Buffer.byteLength('{"a" :  "✓"}'));
  });
});
