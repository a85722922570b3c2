/**
 * The in-memory limiter's own behaviour: its persistence hooks (dirty marks, restore, prune) and
 * its slots. What every window store shares is in window-contract.ts, registered here for it.
 */
import { describe, expect, test } from "bun:test";
import { SlidingWindowLimiter, type WindowRow } from "../../../src/services/ratelimit/sliding-window.ts";
import { TestClock } from "../../support/test-clock.ts";
import { MINUTE, SCOPE, T0, req, windowContract } from "./window-contract.ts";

function setup(startMs = T0) {
  const clock = new TestClock(startMs);
  return { clock, limiter: new SlidingWindowLimiter({ clock }) };
}

windowContract("SlidingWindowLimiter", (startMs) => {
  const { clock, limiter } = setup(startMs);
  return { clock, limiter, windows: () => limiter.size };
});

/** The windows changed since the last call, as a flush would read them. */
function takeDirty(limiter: SlidingWindowLimiter): WindowRow[] {
  return limiter.takeDirty().map((slot) => limiter.windowOf(slot)!);
}

const row = (identifier: string, durationMs: number, windowStartMs: number, count: number, previousCount: number): WindowRow =>
  ({ workspace: "ws_1", scope: SCOPE, durationMs, identifier, windowStartMs, count, previousCount });

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

describe("the counter index", () => {
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
