/**
 * The behaviour every rate-limit window store shares (sliding-window.ts states it): registered
 * once per implementation, the in-memory SlidingWindowLimiter and the Redis one, so that both give
 * the same results for the same checks at the same instants. Results are awaited: the in-memory
 * limiter answers synchronously, and awaiting a plain value is fine.
 */
import { describe, expect, test } from "bun:test";
import type { BatchResult, LimitRequest, LimitResult } from "../../../src/services/ratelimit/index.ts";
import type { TestClock } from "../../support/test-clock.ts";

export interface WindowLimiter {
  check(req: LimitRequest): LimitResult | Promise<LimitResult>;
  checkAll(reqs: readonly LimitRequest[]): BatchResult | Promise<BatchResult>;
}

export interface LimiterUnderTest {
  clock: TestClock;
  limiter: WindowLimiter;
  /** How many counters hold state (a check that charged nothing leaves none). */
  windows(): number | Promise<number>;
}

/** A fresh limiter with no windows, its clock at `startMs`. */
export type LimiterFactory = (startMs: number) => LimiterUnderTest | Promise<LimiterUnderTest>;

export const MINUTE = 60_000;
export const MONTH = 2_592_000_000; // 30 days, the largest duration the API accepts
/** A minute boundary, so offsets below read as "x ms into the window". */
export const T0 = 1_700_000_040_000;
export const SCOPE = "ws_1|ns_1";

export function req(identifier: string, limit: number, cost = 1, durationMs = MINUTE, scope = SCOPE): LimitRequest {
  return { workspace: "ws_1", scope, identifier, limit, durationMs, cost };
}

/** Spends `times` × cost 1 and fails the test if any of them is denied. */
async function spend(limiter: WindowLimiter, counter: string, limit: number, times: number): Promise<void> {
  for (let i = 0; i < times; i++) expect((await limiter.check(req(counter, limit))).success).toBe(true);
}

/** Registers the shared cases for the limiters `make` builds, under `name`. */
export function windowContract(name: string, make: LimiterFactory): void {
  const setup = (startMs = T0) => make(startMs);

  describe(`${name}: check within one window`, () => {
    test("the first request passes with limit − cost remaining and reset at the window end", async () => {
      const { clock, limiter, windows } = await setup();
      clock.advance(15_000);
      expect(await limiter.check(req("a", 10))).toEqual({ success: true, limit: 10, remaining: 9, resetMs: T0 + MINUTE });
      expect(await windows()).toBe(1);
    });

    test("requests pass until exactly the limit, then are denied with remaining 0", async () => {
      const { limiter } = await setup();
      const remaining: number[] = [];
      for (let i = 0; i < 10; i++) remaining.push((await limiter.check(req("a", 10))).remaining);
      expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect(await limiter.check(req("a", 10))).toEqual({ success: false, limit: 10, remaining: 0, resetMs: T0 + MINUTE });
    });

    test("a denied request consumes nothing", async () => {
      const { limiter } = await setup();
      expect((await limiter.check(req("a", 10, 7))).remaining).toBe(3);
      expect((await limiter.check(req("a", 10, 5))).success).toBe(false);
      expect(await limiter.check(req("a", 10, 3))).toMatchObject({ success: true, remaining: 0 });
    });

    test("a cost above the limit is denied and creates no entry", async () => {
      const { limiter, windows } = await setup();
      expect(await limiter.check(req("a", 5, 6))).toMatchObject({ success: false, remaining: 0 });
      expect(await windows()).toBe(0);
      expect(await limiter.check(req("a", 5, 5))).toMatchObject({ success: true, remaining: 0 });
    });

    test("cost 0 passes on an exhausted counter with remaining 0 and charges nothing", async () => {
      const { limiter, windows } = await setup();
      await spend(limiter, "a", 3, 3);
      expect(await limiter.check(req("a", 3, 0))).toEqual({ success: true, limit: 3, remaining: 0, resetMs: T0 + MINUTE });
      expect(await limiter.check(req("fresh", 3, 0))).toMatchObject({ success: true, remaining: 3 });
      expect(await windows()).toBe(1);
    });

    test("limit 0 denies any positive cost and passes cost 0", async () => {
      const { limiter } = await setup();
      expect(await limiter.check(req("a", 0, 1))).toMatchObject({ success: false, remaining: 0 });
      expect(await limiter.check(req("a", 0, 0))).toMatchObject({ success: true, remaining: 0 });
    });

    test("the same counter with another duration is a separate window", async () => {
      const { limiter, windows } = await setup();
      await spend(limiter, "a", 2, 2);
      expect(await limiter.check(req("a", 2, 1, 1_000))).toMatchObject({ success: true, remaining: 1 });
      expect(await windows()).toBe(2);
    });

    test("the same identifier in two scopes is two counters", async () => {
      const { limiter, windows } = await setup();
      await limiter.check(req("u", 5, 5, MINUTE, "ws_1|ns_a"));
      expect((await limiter.check(req("u", 5, 1, MINUTE, "ws_1|ns_a"))).success).toBe(false);
      expect(await limiter.check(req("u", 5, 1, MINUTE, "ws_1|ns_b"))).toMatchObject({ success: true, remaining: 4 });
      expect(await windows()).toBe(2);
    });
  });

  describe(`${name}: check across windows`, () => {
    test("the previous window is weighted by the unelapsed part of the current one, floored", async () => {
      const { clock, limiter } = await setup();
      await limiter.check(req("a", 100, 60));
      clock.set(T0 + MINUTE - 1);
      expect((await limiter.check(req("a", 100, 0))).remaining).toBe(40);
      clock.set(T0 + MINUTE); // 0%: 60 × 1
      expect(await limiter.check(req("a", 100, 0))).toMatchObject({ remaining: 40, resetMs: T0 + 2 * MINUTE });
      clock.set(T0 + MINUTE + 30_000); // 50%: 60 × 0.5 = 30
      expect((await limiter.check(req("a", 100, 0))).remaining).toBe(70);
      clock.set(T0 + MINUTE + 45_000); // 75%: 60 × 0.25 = 15
      expect((await limiter.check(req("a", 100, 0))).remaining).toBe(85);
      clock.set(T0 + MINUTE + 59_400); // 99%: 60 × 0.01 = 0.6, floored to 0
      expect((await limiter.check(req("a", 100, 0))).remaining).toBe(100);
    });

    test("spends in the new window add to the weighted previous count", async () => {
      const { clock, limiter } = await setup();
      await limiter.check(req("a", 100, 60));
      clock.set(T0 + MINUTE);
      expect((await limiter.check(req("a", 100, 1))).remaining).toBe(39);
      clock.set(T0 + MINUTE + 30_000);
      expect((await limiter.check(req("a", 100, 1))).remaining).toBe(68);
      clock.set(T0 + MINUTE + 59_400);
      expect((await limiter.check(req("a", 100, 0))).remaining).toBe(98);
    });

    test("after a denial, the weighted previous count frees capacity as time passes", async () => {
      const { clock, limiter } = await setup();
      await spend(limiter, "a", 10, 10);
      clock.set(T0 + MINUTE - 1);
      expect((await limiter.check(req("a", 10))).success).toBe(false);
      clock.set(T0 + MINUTE + 30_000); // weighted previous 5
      expect((await limiter.check(req("a", 10, 6))).success).toBe(false);
      expect(await limiter.check(req("a", 10, 5))).toMatchObject({ success: true, remaining: 0 });
      expect((await limiter.check(req("a", 10, 1))).success).toBe(false);
    });

    test("a gap of two windows or more resets the counter fully", async () => {
      const { clock, limiter } = await setup();
      await spend(limiter, "a", 10, 10);
      clock.set(T0 + 2 * MINUTE);
      expect(await limiter.check(req("a", 10))).toEqual({ success: true, limit: 10, remaining: 9, resetMs: T0 + 3 * MINUTE });
      clock.set(T0 + 7 * MINUTE + 1);
      expect((await limiter.check(req("a", 10))).remaining).toBe(9);
    });

    test("reset is the end of the epoch-aligned window in Unix ms", async () => {
      const { limiter } = await setup(1_700_000_000_123);
      expect((await limiter.check(req("s", 5, 1, 1_000))).resetMs).toBe(1_700_000_001_000);
      expect((await limiter.check(req("m", 5, 1, MINUTE))).resetMs).toBe(1_700_000_040_000);
      expect((await limiter.check(req("d", 5, 1, MONTH))).resetMs).toBe(1_700_352_000_000);
    });

    test("a clock stepping back does not give back spent capacity", async () => {
      const { clock, limiter } = await setup(T0 + MINUTE);
      await spend(limiter, "a", 10, 10);
      clock.set(T0 + MINUTE - 1_000);
      expect(await limiter.check(req("a", 10))).toEqual({ success: false, limit: 10, remaining: 0, resetMs: T0 + 2 * MINUTE });
    });
  });

  describe(`${name}: checkAll`, () => {
    test("12/minute + 200/month: the 13th call is denied and the monthly remaining stays 188", async () => {
      const { limiter } = await setup();
      const batch = [req("key_1|minute", 12), req("key_1|month", 200, 1, MONTH)];
      for (let i = 1; i <= 12; i++) {
        const r = await limiter.checkAll(batch);
        expect(r.success).toBe(true);
        expect(r.results.map((x) => x.remaining)).toEqual([12 - i, 200 - i]);
      }
      for (let attempt = 0; attempt < 2; attempt++) {
        expect(await limiter.checkAll(batch)).toEqual({
          success: false,
          results: [
            { success: false, limit: 12, remaining: 0, resetMs: T0 + MINUTE },
            { success: true, limit: 200, remaining: 188, resetMs: 1_700_352_000_000 },
          ],
        });
      }
      expect((await limiter.check(req("key_1|month", 200, 0, MONTH))).remaining).toBe(188);
    });

    test("the same counter twice: the second item sees the first's cost", async () => {
      const { limiter } = await setup();
      const ok = await limiter.checkAll([req("a", 10, 4), req("a", 10, 4)]);
      expect(ok.success).toBe(true);
      expect(ok.results.map((r) => r.remaining)).toEqual([6, 2]);

      const failed = await limiter.checkAll([req("a", 10, 2), req("a", 10, 1)]);
      expect(failed.success).toBe(false);
      expect(failed.results.map((r) => [r.success, r.remaining])).toEqual([[true, 2], [false, 0]]);
      expect((await limiter.check(req("a", 10, 0))).remaining).toBe(2);
    });

    test("an empty batch passes", async () => {
      const { limiter } = await setup();
      expect(await limiter.checkAll([])).toEqual({ success: true, results: [] });
    });
  });
}
