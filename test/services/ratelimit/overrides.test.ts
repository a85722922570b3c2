import { describe, expect, test } from "bun:test";
import { OverrideIndex, matchesPattern, type OverrideRecord } from "../../../src/services/ratelimit/overrides.ts";
import { intBetween, pick, rng } from "../../support/prng.ts";

function override(identifier: string, extra: Partial<OverrideRecord> = {}): OverrideRecord {
  return { id: `rlor_${identifier}`, identifier, limit: 1, duration: 1000, createdAt: 0, ...extra };
}

describe("matchesPattern", () => {
  test.each([
    ["premium_*", "premium_user1", true],
    ["premium_*", "premium_", true],
    ["premium_*", "xpremium_user1", false],
    ["*_admin", "root_admin", true],
    ["*_admin", "root_admin2", false],
    ["*suspicious*", "very_suspicious_ip", true],
    ["*suspicious*", "suspicious", true],
    ["*suspicious*", "suspiciou", false],
    ["a*b*c", "abc", true],
    ["a*b*c", "a-x-b-y-c", true],
    ["a*b*c", "a-x-c-y-b", false],
    ["*", "anything at all", true],
    ["**", "x", true],
    ["exact", "exact", true],
    ["exact", "exactly", false],
    ["exact", "inexact", false],
  ])("%p against %p → %p", (pattern, identifier, expected) => {
    expect(matchesPattern(pattern, identifier)).toBe(expected);
  });

  test("regex special characters are literal", () => {
    expect(matchesPattern("a.b*", "a.bc")).toBe(true);
    expect(matchesPattern("a.b*", "axbc")).toBe(false);
    expect(matchesPattern("(x)+[y]?$*", "(x)+[y]?$ tail")).toBe(true);
    expect(matchesPattern("(x)+[y]?$*", "xxy")).toBe(false);
    expect(matchesPattern("^a|b*", "^a|bz")).toBe(true);
    expect(matchesPattern("^a|b*", "b")).toBe(false);
    expect(matchesPattern("\\d*", "\\d1")).toBe(true);
    expect(matchesPattern("\\d*", "1")).toBe(false);
  });

  test("a star matches across new lines and other unicode", () => {
    expect(matchesPattern("a*z", "a\nb\nz")).toBe(true);
    expect(matchesPattern("ü*🚀", "ü-x-🚀")).toBe(true);
  });

  test("many stars on a long non-matching identifier finish (no exponential backtracking)", () => {
    // A backtracking regex for this pattern would not finish within the test timeout.
    expect(matchesPattern(`${"*a".repeat(200)}*b`, "a".repeat(512))).toBe(false);
    expect(matchesPattern(`${"*a".repeat(200)}*`, "a".repeat(512))).toBe(true);
  });

  test("agrees with an anchored regular expression on random patterns and identifiers", () => {
    const seed = 22;
    const next = rng(seed);
    const text = (alphabet: string[], max: number) => Array.from({ length: intBetween(next, 0, max) }, () => pick(next, alphabet)).join("");
    for (let i = 0; i < 5000; i++) {
      const pattern = text(["a", "b", "*", "."], 8);
      const identifier = text(["a", "b", "."], 10);
      const reference = new RegExp(`^${pattern.split("*").map((p) => p.replaceAll(".", "\\.")).join(".*")}$`, "s");
      if (matchesPattern(pattern, identifier) !== reference.test(identifier)) throw new Error(`seed ${seed}: ${pattern} against ${identifier}`);
    }
  });
});

describe("OverrideIndex.match", () => {
  test("an exact identifier wins over a wildcard that also matches", () => {
    const index = new OverrideIndex([override("user_*"), override("user_1")]);
    expect(index.match("user_1")?.identifier).toBe("user_1");
    expect(index.match("user_2")?.identifier).toBe("user_*");
  });

  test("no match → undefined", () => {
    expect(new OverrideIndex([override("user_*"), override("x")]).match("admin")).toBeUndefined();
    expect(new OverrideIndex([]).match("admin")).toBeUndefined();
  });

  test("a pattern is found by its own text as an exact identifier", () => {
    expect(new OverrideIndex([override("user_*")]).match("user_*")?.identifier).toBe("user_*");
  });

  test("among matching wildcards the most specific (most literal characters) wins, whatever the order", () => {
    const records = [override("*"), override("user_*"), override("user_premium_*"), override("*_premium_*")];
    expect(new OverrideIndex(records).match("user_premium_1")?.identifier).toBe("user_premium_*");
    expect(new OverrideIndex([...records].reverse()).match("user_premium_1")?.identifier).toBe("user_premium_*");
    expect(new OverrideIndex(records).match("user_2")?.identifier).toBe("user_*");
    expect(new OverrideIndex(records).match("other")?.identifier).toBe("*");
  });

  test("equally specific wildcards: the older one wins", () => {
    const older = override("a*", { id: "rlor_z", createdAt: 1 });
    const newer = override("*a", { id: "rlor_a", createdAt: 2 });
    expect(new OverrideIndex([newer, older]).match("aa")?.id).toBe("rlor_z");
  });

  test("put and remove keep the index as a rebuild from the same records would be", () => {
    const index = new OverrideIndex([override("user_*"), override("user_1")]);
    index.put(override("user_premium_*"));
    expect(index.match("user_premium_1")?.identifier).toBe("user_premium_*");
    expect(index.wildcardCount).toBe(2);
    index.put(override("user_*", { id: "rlor_same", limit: 7 }));
    expect(index.match("user_2")).toMatchObject({ id: "rlor_same", limit: 7 });
    expect(index.wildcardCount).toBe(2);
    index.remove("user_premium_*");
    expect(index.match("user_premium_1")?.identifier).toBe("user_*");
    index.remove("user_1");
    expect(index.match("user_1")?.identifier).toBe("user_*");
    index.remove("user_*");
    expect(index.match("user_1")).toBeUndefined();
    expect(index.wildcardCount).toBe(0);
  });
});
