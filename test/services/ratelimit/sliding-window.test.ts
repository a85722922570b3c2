import { describe, expect, test } from "bun:test";
import { SlidingWindowLimiter, type LimitRequest, type WindowRow } from "../../../src/services/ratelimit/sliding-window.ts";
import { TestClock } from "../../support/test-clock.ts";

const MINUTE = 60_000;
const MONTH = 2_592_000_000; // 30 days, the largest duration the API accepts
/** A minute boundary, so offsets below read as "x ms into the window". */
const T0 = 1_700_000_040_000;

function setup(startMs = T0) {
  const clock = new TestClock(startMs);
  return { clock, limiter: new SlidingWindowLimiter({ clock }) };
}

const SCOPE = "ws_1|ns_1";

function req(identifier: string, limit: number, cost = 1, durationMs = MINUTE, scope = SCOPE): LimitRequest {
  return { workspace: "ws_1", scope, identifier, limit, durationMs, cost };
}

/** The windows changed since the last call, as a flush would read them. */
function takeDirty(limiter: SlidingWindowLimiter): WindowRow[] {
  return limiter.takeDirty().map((slot) => limiter.windowOf(slot)!);
}

const row = (identifier: string, durationMs: number, windowStartMs: number, count: number, previousCount: number): WindowRow =>
  ({ workspace: "ws_1", scope: SCOPE, durationMs, identifier, windowStartMs, count, previousCount });

/** Spends `times` × cost 1 and fails the test if any of them is denied. */
function spend(limiter: SlidingWindowLimiter, counter: string, limit: number, times: number): void {
  for (let i = 0; i < times; i++) expect(limiter.check(req(counter, limit)).success).toBe(true);
}

describe("check: within one window", () => {
  test("the first request passes with limit − cost remaining and reset at the window end", () => {
    const { clock, limiter } = setup();
    clock.advance(15_000);
    expect(limiter.check(req("a", 10))).toEqual({ success: true, limit: 10, remaining: 9, resetMs: T0 + MINUTE });
    expect(limiter.size).toBe(1);
  });

  test("requests pass until exactly the limit, then are denied with remaining 0", () => {
    const { limiter } = setup();
    const remaining = Array.from({ length: 10 }, () => limiter.check(req("a", 10)).remaining);
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(limiter.check(req("a", 10))).toEqual({ success: false, limit: 10, remaining: 0, resetMs: T0 + MINUTE });
  });

  test("a denied request consumes nothing", () => {
    const { limiter } = setup();
    expect(limiter.check(req("a", 10, 7)).remaining).toBe(3);
    expect(limiter.check(req("a", 10, 5)).success).toBe(false);
    expect(limiter.check(req("a", 10, 3))).toMatchObject({ success: true, remaining: 0 });
  });

  test("a cost above the limit is denied and creates no entry", () => {
    const { limiter } = setup();
    expect(limiter.check(req("a", 5, 6))).toMatchObject({ success: false, remaining: 0 });
    expect(limiter.size).toBe(0);
    expect(limiter.check(req("a", 5, 5))).toMatchObject({ success: true, remaining: 0 });
  });

  test("cost 0 passes on an exhausted counter with remaining 0 and charges nothing", () => {
    const { limiter } = setup();
    spend(limiter, "a", 3, 3);
    expect(limiter.check(req("a", 3, 0))).toEqual({ success: true, limit: 3, remaining: 0, resetMs: T0 + MINUTE });
    expect(limiter.check(req("fresh", 3, 0))).toMatchObject({ success: true, remaining: 3 });
    expect(limiter.size).toBe(1);
  });

  test("limit 0 denies any positive cost and passes cost 0", () => {
    const { limiter } = setup();
    expect(limiter.check(req("a", 0, 1))).toMatchObject({ success: false, remaining: 0 });
    expect(limiter.check(req("a", 0, 0))).toMatchObject({ success: true, remaining: 0 });
  });

  test("the same counter with another duration is a separate window", () => {
    const { limiter } = setup();
    spend(limiter, "a", 2, 2);
    expect(limiter.check(req("a", 2, 1, 1_000))).toMatchObject({ success: true, remaining: 1 });
    expect(limiter.size).toBe(2);
  });
});

describe("check: across windows", () => {
  test("the previous window is weighted by the unelapsed part of the current one, floored", () => {
    const { clock, limiter } = setup();
    limiter.check(req("a", 100, 60));
    clock.set(T0 + MINUTE - 1);
    expect(limiter.check(req("a", 100, 0)).remaining).toBe(40);
    clock.set(T0 + MINUTE); // 0%: 60 × 1
    expect(limiter.check(req("a", 100, 0))).toMatchObject({ remaining: 40, resetMs: T0 + 2 * MINUTE });
    clock.set(T0 + MINUTE + 30_000); // 50%: 60 × 0.5 = 30
    expect(limiter.check(req("a", 100, 0)).remaining).toBe(70);
    clock.set(T0 + MINUTE + 45_000); // 75%: 60 × 0.25 = 15
    expect(limiter.check(req("a", 100, 0)).remaining).toBe(85);
    clock.set(T0 + MINUTE + 59_400); // 99%: 60 × 0.01 = 0.6, floored to 0
    expect(limiter.check(req("a", 100, 0)).remaining).toBe(100);
  });

  test("spends in the new window add to the weighted previous count", () => {
    const { clock, limiter } = setup();
    limiter.check(req("a", 100, 60));
    clock.set(T0 + MINUTE);
    expect(limiter.check(req("a", 100, 1)).remaining).toBe(39);
    clock.set(T0 + MINUTE + 30_000);
    expect(limiter.check(req("a", 100, 1)).remaining).toBe(68);
    clock.set(T0 + MINUTE + 59_400);
    expect(limiter.check(req("a", 100, 0)).remaining).toBe(98);
  });

  test("after a denial, the weighted previous count frees capacity as time passes", () => {
    const { clock, limiter } = setup();
    spend(limiter, "a", 10, 10);
    clock.set(T0 + MINUTE - 1);
    expect(limiter.check(req("a", 10)).success).toBe(false);
    clock.set(T0 + MINUTE + 30_000); // weighted previous 5
    expect(limiter.check(req("a", 10, 6)).success).toBe(false);
    expect(limiter.check(req("a", 10, 5))).toMatchObject({ success: true, remaining: 0 });
    expect(limiter.check(req("a", 10, 1)).success).toBe(false);
  });

  test("a gap of two windows or more resets the counter fully", () => {
    const { clock, limiter } = setup();
    spend(limiter, "a", 10, 10);
    clock.set(T0 + 2 * MINUTE);
    expect(limiter.check(req("a", 10))).toEqual({ success: true, limit: 10, remaining: 9, resetMs: T0 + 3 * MINUTE });
    clock.set(T0 + 7 * MINUTE + 1);
    expect(limiter.check(req("a", 10)).remaining).toBe(9);
  });

  test("reset is the end of the epoch-aligned window in Unix ms", () => {
    const { limiter } = setup(1_700_000_000_123);
    expect(limiter.check(req("s", 5, 1, 1_000)).resetMs).toBe(1_700_000_001_000);
    expect(limiter.check(req("m", 5, 1, MINUTE)).resetMs).toBe(1_700_000_040_000);
    expect(limiter.check(req("d", 5, 1, MONTH)).resetMs).toBe(1_700_352_000_000);
  });

  test("a clock stepping back does not give back spent capacity", () => {
    const { clock, limiter } = setup(T0 + MINUTE);
    spend(limiter, "a", 10, 10);
    clock.set(T0 + MINUTE - 1_000);
    expect(limiter.check(req("a", 10))).toEqual({ success: false, limit: 10, remaining: 0, resetMs: T0 + 2 * MINUTE });
  });
});

describe("checkAll", () => {
  test("12/minute + 200/month: the 13th call is denied and the monthly remaining stays 188", () => {
    const { limiter } = setup();
    const batch = [req("key_1|minute", 12), req("key_1|month", 200, 1, MONTH)];
    for (let i = 1; i <= 12; i++) {
      const r = limiter.checkAll(batch);
      expect(r.success).toBe(true);
      expect(r.results.map((x) => x.remaining)).toEqual([12 - i, 200 - i]);
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(limiter.checkAll(batch)).toEqual({
        success: false,
        results: [
          { success: false, limit: 12, remaining: 0, resetMs: T0 + MINUTE },
          { success: true, limit: 200, remaining: 188, resetMs: 1_700_352_000_000 },
        ],
      });
    }
    expect(limiter.check(req("key_1|month", 200, 0, MONTH)).remaining).toBe(188);
  });

  test("the same counter twice: the second item sees the first's cost", () => {
    const { limiter } = setup();
    const ok = limiter.checkAll([req("a", 10, 4), req("a", 10, 4)]);
    expect(ok.success).toBe(true);
    expect(ok.results.map((r) => r.remaining)).toEqual([6, 2]);

    const failed = limiter.checkAll([req("a", 10, 2), req("a", 10, 1)]);
    expect(failed.success).toBe(false);
    expect(failed.results.map((r) => [r.success, r.remaining])).toEqual([[true, 2], [false, 0]]);
    expect(limiter.check(req("a", 10, 0)).remaining).toBe(2);
  });

  test("an empty batch passes", () => {
    const { limiter } = setup();
    expect(limiter.checkAll([])).toEqual({ success: true, results: [] });
  });
});

describe("persistence hooks", () => {
  test("takeDirty returns changed entries once, and restore reproduces the decisions", () => {
    const { clock, limiter } = setup();
    limiter.check(req("a", 10, 6));
    limiter.check(req("b", 10, 1, 1_000));
    limiter.check(req("c", 10, 0));
    expect(takeDirty(limiter)).toEqual([row("a", MINUTE, T0, 6, 0), row("b", 1_000, T0, 1, 0)]);
    expect(takeDirty(limiter)).toEqual([]);

    clock.set(T0 + MINUTE + 15_000);
    limiter.check(req("a", 10, 2));
    const rows = takeDirty(limiter);
    expect(rows).toEqual([row("a", MINUTE, T0 + MINUTE, 2, 6)]);

    const restored = new SlidingWindowLimiter({ clock });
    for (const r of rows) restored.restore(r);
    expect(restored.size).toBe(1);
    expect(takeDirty(restored)).toEqual([]);
    clock.set(T0 + MINUTE + 30_000); // 10 − 2 − floor(6 × 0.5)
    expect(restored.check(req("a", 10, 0)).remaining).toBe(5);
    expect(limiter.check(req("a", 10, 0)).remaining).toBe(5);
  });

  test("markDirty puts slots back for the next flush, except slots freed meanwhile", () => {
    const { limiter } = setup();
    limiter.check(req("kept", 10, 1));
    limiter.check(req("gone", 10, 1, 1_000));
    const slots = limiter.takeDirty();
    limiter.prune(T0 + 2_000);
    limiter.markDirty(slots);
    expect(takeDirty(limiter)).toEqual([row("kept", MINUTE, T0, 1, 0)]);
  });

  test("prune removes entries once both windows are out of reach and frees their slots", () => {
    const { clock, limiter } = setup();
    limiter.check(req("old", 10, 3));
    clock.set(T0 + MINUTE);
    limiter.check(req("new", 10, 4));
    expect(limiter.prune(T0 + 2 * MINUTE - 1)).toBe(0);
    expect(limiter.prune(T0 + 2 * MINUTE)).toBe(1);
    expect(limiter.size).toBe(1);

    clock.set(T0 + 2 * MINUTE);
    expect(limiter.check(req("old", 10, 0)).remaining).toBe(10);
    limiter.check(req("reused", 10, 5));
    // Order is not part of the contract; a reused slot may come first.
    const rows = takeDirty(limiter).sort((x, y) => x.identifier.localeCompare(y.identifier));
    expect(rows).toEqual([row("new", MINUTE, T0 + MINUTE, 4, 0), row("reused", MINUTE, T0 + 2 * MINUTE, 5, 0)]);
    expect(limiter.prune(T0 + 4 * MINUTE)).toBe(2);
    expect(limiter.size).toBe(0);
  });

  test("counters beyond the initial capacity keep their own state", () => {
    const { limiter } = setup();
    for (let i = 0; i < 5_000; i++) limiter.check(req(`c${i}`, 10_000, i));
    expect(limiter.size).toBe(4_999); // c0 had cost 0 and stored nothing
    expect(limiter.check(req("c4321", 10_000, 0)).remaining).toBe(10_000 - 4_321);
    expect(takeDirty(limiter)).toHaveLength(4_999);
  });
});

describe("scopes and the counter index", () => {
  test("the same identifier in two scopes is two counters", () => {
    const { limiter } = setup();
    limiter.check(req("u", 5, 5, MINUTE, "ws_1|ns_a"));
    expect(limiter.check(req("u", 5, 1, MINUTE, "ws_1|ns_a")).success).toBe(false);
    expect(limiter.check(req("u", 5, 1, MINUTE, "ws_1|ns_b"))).toMatchObject({ success: true, remaining: 4 });
    expect(limiter.size).toBe(2);
  });

  test("pruning many counters keeps every other counter findable, and freed slots are reused", () => {
    const { clock, limiter } = setup();
    // Short windows for even counters, long ones for odd: a prune removes every other entry of each probe run.
    for (let i = 0; i < 20_000; i++) limiter.check(req(`u${i}`, 100, 1 + (i % 7), i % 2 === 0 ? 1_000 : MINUTE));
    expect(limiter.prune(T0 + 2_000)).toBe(10_000);
    for (let i = 1; i < 20_000; i += 2) expect(limiter.check(req(`u${i}`, 100, 0)).remaining).toBe(100 - 1 - (i % 7));
    for (let i = 0; i < 20_000; i += 2) expect(limiter.check(req(`u${i}`, 100, 0, 1_000)).remaining).toBe(100);
    const bound = limiter.slotBound;
    clock.set(T0 + 2_000);
    for (let i = 0; i < 10_000; i++) limiter.check(req(`v${i}`, 100, 1));
    expect(limiter.slotBound).toBe(bound);
    expect(limiter.size).toBe(20_000);
    expect(limiter.check(req("v9999", 100, 0)).remaining).toBe(99);
  });

  test("a scope whose counters were all pruned is forgotten and can come back", () => {
    const { clock, limiter } = setup();
    limiter.check(req("x", 3, 3, 1_000, "ws_1|short"));
    expect(limiter.prune(T0 + 2_000)).toBe(1);
    clock.set(T0 + 2_000);
    expect(limiter.check(req("x", 3, 1, 1_000, "ws_1|short"))).toMatchObject({ success: true, remaining: 2 });
    expect(takeDirty(limiter)).toEqual([{ ...row("x", 1_000, T0 + 2_000, 1, 0), scope: "ws_1|short" }]);
  });
});
