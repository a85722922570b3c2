import { describe, expect, test } from "bun:test";
import { OverrideIndex, matchesPattern, overrideBytes, type OverrideRecord, type Spill } from "../../../src/services/ratelimit/overrides.ts";
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

/** The rule of §5.15 as a plain scan: the exact identifier, else the most literal matching wildcard, then the oldest, then the smallest id. */
function oracle(stored: ReadonlyMap<string, OverrideRecord>, identifier: string): OverrideRecord | undefined {
  const exact = stored.get(identifier);
  if (exact !== undefined) return exact;
  const literal = (r: OverrideRecord) => r.identifier.replaceAll("*", "").length;
  let best: OverrideRecord | undefined;
  for (const r of stored.values()) {
    if (!r.identifier.includes("*") || !matchesPattern(r.identifier, identifier)) continue;
    if (best === undefined || literal(r) > literal(best) || (literal(r) === literal(best) && (r.createdAt < best.createdAt || (r.createdAt === best.createdAt && r.id < best.id)))) best = r;
  }
  return best;
}

/** A spill whose exact lookups read `stored`, as SQLite would hold the overrides. */
function spillTo(stored: ReadonlyMap<string, OverrideRecord>, maxBytes: number): Spill {
  return { maxBytes, findExact: (identifier) => stored.get(identifier) };
}

const wildcardsOf = (stored: ReadonlyMap<string, OverrideRecord>) => [...stored.values()].filter((r) => r.identifier.includes("*"));

describe("spilled indexes", () => {
  test("a spilled index holds its wildcards only and finds exact identifiers through its spill", () => {
    const stored = new Map([override("user_*"), override("user_1"), override("user_2")].map((r) => [r.identifier, r]));
    const index = OverrideIndex.spilled(wildcardsOf(stored), spillTo(stored, 0));
    expect(index.isSpilled).toBe(true);
    expect(index.size).toBe(1);
    expect(index.bytes).toBe(overrideBytes("user_*"));
    expect(index.match("user_1")?.identifier).toBe("user_1");
    expect(index.match("user_3")?.identifier).toBe("user_*");
    expect(index.match("user_*")?.identifier).toBe("user_*");
  });

  test("an index that outgrows its bytes lets its exact overrides go and keeps matching the same", () => {
    const stored = new Map<string, OverrideRecord>();
    const index = new OverrideIndex([], spillTo(stored, 3 * overrideBytes("id_00")));
    for (const identifier of ["id_*", "id_00", "id_01", "id_02", "id_03"]) {
      stored.set(identifier, override(identifier));
      index.put(override(identifier));
    }
    expect(index.isSpilled).toBe(true);
    expect(index.size).toBe(1);
    expect(index.match("id_03")?.identifier).toBe("id_03");
    expect(index.match("id_04")?.identifier).toBe("id_*");
  });

  test("in memory, spilled on the way, built spilled and rebuilt: every index matches as the plain scan does through random changes", () => {
    const seed = 2215;
    const next = rng(seed);
    const text = (alphabet: string[], min: number, max: number) => Array.from({ length: intBetween(next, min, max) }, () => pick(next, alphabet)).join("");
    const stored = new Map<string, OverrideRecord>();
    const inMemory = new OverrideIndex([]);
    const spilling = new OverrideIndex([], spillTo(stored, 12 * overrideBytes("abab")));
    let spilledOnTheWay = false;
    for (let step = 0; step < 600; step++) {
      const identifier = text(["a", "b", "*"], 1, 4);
      const known = stored.get(identifier);
      if (known !== undefined && next() < 0.4) {
        stored.delete(identifier);
        for (const index of [inMemory, spilling]) index.remove(identifier);
      } else {
        // A replaced override keeps its id and creation time, as upsertOverride does.
        const record = known === undefined ? override(identifier, { id: `rlor_${step}`, createdAt: intBetween(next, 0, 3) }) : { ...known, limit: step };
        stored.set(identifier, record);
        for (const index of [inMemory, spilling]) index.put(record);
      }
      spilledOnTheWay ||= spilling.isSpilled;
      const indexes = [inMemory, spilling, new OverrideIndex([...stored.values()]), OverrideIndex.spilled(wildcardsOf(stored), spillTo(stored, 0))];
      for (let probe = 0; probe < 20; probe++) {
        const asked = next() < 0.9 ? text(["a", "b"], 0, 6) : text(["a", "b", "*"], 1, 4);
        const expected = oracle(stored, asked);
        for (const [i, index] of indexes.entries()) {
          if (index.match(asked) !== expected) throw new Error(`seed ${seed}, step ${step}: index ${i} on '${asked}' gave ${index.match(asked)?.id}, expected ${expected?.id}`);
        }
      }
    }
    expect(spilledOnTheWay).toBe(true);
  });
});
