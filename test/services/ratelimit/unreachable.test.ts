/** tolerateUnreachable: what a check answers while the window store cannot be reached (TOLLGATE_REDIS_UNREACHABLE). */
import { describe, expect, test } from "bun:test";
import { SlidingWindowLimiter, tolerateUnreachable, WindowStoreUnavailable, type WindowLimiter } from "../../../src/services/ratelimit/index.ts";
import type { LimitRequest } from "../../../src/services/ratelimit/index.ts";
import { TestClock } from "../../support/test-clock.ts";

const REQUEST: LimitRequest = { workspace: "ws_1", scope: "ws_1|ns", identifier: "user", limit: 10, durationMs: 60_000, cost: 3 };

/** A store that is away: every check rejects as Redis's limiter does when it gets no answer. */
const away: WindowLimiter = {
  check: () => Promise.reject(new WindowStoreUnavailable("no answer")),
  checkAll: () => Promise.reject(new WindowStoreUnavailable("no answer")),
};

describe("while the store is unreachable", () => {
  test("open: every check passes, as if its counter were empty, and each is counted", async () => {
    const clock = new TestClock(1_000);
    let counted = 0;
    const limiter = tolerateUnreachable(away, "open", clock, () => counted++);
    expect(await limiter.check(REQUEST)).toEqual({ success: true, limit: 10, remaining: 7, resetMs: 61_000 });
    expect(await limiter.checkAll([REQUEST, { ...REQUEST, limit: 2 }])).toEqual({
      success: true,
      results: [{ success: true, limit: 10, remaining: 7, resetMs: 61_000 }, { success: true, limit: 2, remaining: 0, resetMs: 61_000 }],
    });
    expect(counted).toBe(2);
  });

  test("closed: every check that costs something is refused, as if its limit were spent", async () => {
    const limiter = tolerateUnreachable(away, "closed", new TestClock(1_000));
    expect(await limiter.check(REQUEST)).toEqual({ success: false, limit: 10, remaining: 0, resetMs: 61_000 });
    const batch = await limiter.checkAll([REQUEST, { ...REQUEST, cost: 0 }]);
    expect(batch.success).toBe(false);
    expect(batch.results.map((r) => r.success)).toEqual([false, true]);
  });

  test("other errors are not hidden", async () => {
    const broken: WindowLimiter = { check: () => Promise.reject(new TypeError("bug")), checkAll: () => Promise.reject(new TypeError("bug")) };
    await expect(Promise.resolve(tolerateUnreachable(broken, "open", new TestClock()).check(REQUEST))).rejects.toThrow("bug");
  });
});

test("a reachable store answers for itself", async () => {
  const clock = new TestClock(1_000);
  const limiter = tolerateUnreachable(new SlidingWindowLimiter({ clock }), "open", clock);
  for (let i = 0; i < 3; i++) expect((await limiter.check(REQUEST)).success).toBe(true);
  expect((await limiter.check(REQUEST)).success).toBe(false);
});
