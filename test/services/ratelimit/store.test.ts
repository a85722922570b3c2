import { describe, expect, test } from "bun:test";
import type { LimitRequest } from "../../../src/services/ratelimit/index.ts";
import { runRatelimitFlushOnce, runRatelimitPruneOnce } from "../../../src/jobs/ratelimit.ts";
import { storeFixture } from "./store-fixture.ts";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute boundary

const t = storeFixture(T0);

const req = (identifier: string, limit = 3, durationMs = MINUTE): LimitRequest => ({ workspace: "ws", scope: "ws|ns", identifier, limit, durationMs, cost: 1 });

describe("flush and restore", () => {
  test("a used-up window is still used up in a new limiter restored from SQLite", () => {
    const a = t.fresh();
    for (let i = 0; i < 3; i++) expect(a.limiter.check(req("ws|ns|u1")).success).toBe(true);
    expect(runRatelimitFlushOnce({ store: a.store }, t.clock.now())).toBe(1);

    const b = t.fresh();
    expect(b.store.restore(t.clock.now())).toBe(1);
    expect(b.limiter.check(req("ws|ns|u1")).success).toBe(false);
    expect(b.limiter.check(req("ws|ns|u2")).success).toBe(true);
  });

  test("the previous window's count is kept, so the sliding weight survives a restart", () => {
    const a = t.fresh();
    for (let i = 0; i < 10; i++) a.limiter.check(req("c", 10));
    t.clock.advance(MINUTE + MINUTE / 2); // half-way into the next window: 5 of the 10 still weigh
    a.limiter.check(req("c", 10)); // moves the stored window forward
    a.store.flush(t.clock.now());

    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(b.limiter.check({ ...req("c", 10), cost: 0 }).remaining).toBe(10 - 5 - 1);
  });

  test("only changed windows are written; an unchanged one is not rewritten", () => {
    const { limiter, store } = t.fresh();
    limiter.check(req("x"));
    limiter.check(req("y"));
    expect(store.flush(t.clock.now())).toBe(2);
    expect(store.flush(t.clock.now())).toBe(0);
    limiter.check(req("x"));
    expect(store.flush(t.clock.now())).toBe(1);
    expect(t.loggedWindows()).toBe(3);
  });

  test("the same counter with two durations is two windows", () => {
    const { limiter, store } = t.fresh();
    limiter.check(req("same", 3, MINUTE));
    limiter.check(req("same", 3, 1000));
    expect(store.flush(t.clock.now())).toBe(2);
    const b = t.fresh();
    expect(b.store.restore(t.clock.now())).toBe(2);
  });

  test("a flush that fails keeps its windows and writes them, as they are by then, with the next flush", () => {
    const { limiter, store } = t.fresh();
    limiter.check(req("kept"));
    t.storage.sqlite.run("ALTER TABLE ratelimit_log RENAME TO rl_away");
    expect(() => store.flush(t.clock.now())).toThrow();
    t.storage.sqlite.run("ALTER TABLE rl_away RENAME TO ratelimit_log");
    limiter.check(req("kept"));
    expect(store.flush(t.clock.now())).toBe(1);
    const restored = t.fresh();
    restored.store.restore(t.clock.now());
    expect(restored.limiter.size).toBe(1);
    expect(restored.limiter.check({ ...req("kept"), cost: 0 }).remaining).toBe(1);
  });

  test("rows that no longer weigh anything are not restored", () => {
    const { limiter, store } = t.fresh();
    limiter.check(req("old"));
    store.flush(t.clock.now());
    t.clock.advance(2 * MINUTE);
    const b = t.fresh();
    expect(b.store.restore(t.clock.now())).toBe(0);
    expect(b.limiter.size).toBe(0);
  });
});

describe("prune", () => {
  test("drops expired windows from memory, and log chunks whose windows have all expired", () => {
    const { limiter, store } = t.fresh();
    limiter.check(req("short", 3, 1000));
    store.flush(t.clock.now());
    limiter.check(req("long", 3, MINUTE));
    store.flush(t.clock.now());
    t.clock.advance(2000);
    expect(runRatelimitPruneOnce({ store }, t.clock.now())).toEqual({ memory: 1, stored: 1 });
    expect(limiter.size).toBe(1);
    expect(t.loggedWindows()).toBe(1);
  });
});
