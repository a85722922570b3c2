/**
 * The window log: restore replays many flushes with the latest window of a counter winning,
 * compaction keeps the log near the live state without losing a count (also when interrupted),
 * a crash loses at most the changes since the last flush, and rows of the first storage format
 * are restored and moved into the log.
 */
import { describe, expect, test } from "bun:test";
import { SlidingWindowLimiter, type LimitRequest } from "../../../src/services/ratelimit/index.ts";
import { decodeChunk, encodeChunk, splitLegacyCounter } from "../../../src/services/ratelimit/window-log.ts";
import { storeFixture } from "./store-fixture.ts";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute boundary

const t = storeFixture(T0);

const req = (identifier: string, cost = 1, scope = "ws_1|ns_1"): LimitRequest => ({ workspace: "ws_1", scope, identifier, limit: 1_000, durationMs: MINUTE, cost });
const remaining = (limiter: SlidingWindowLimiter, identifier: string, scope?: string) => limiter.check(req(identifier, 0, scope)).remaining;

describe("chunk encoding", () => {
  test("a chunk decodes to the windows it was made of, scopes and durations kept apart", () => {
    const rows = [
      { workspace: "ws_1", scope: "ws_1|ns_1", durationMs: MINUTE, identifier: "u|with|bars", windowStartMs: T0, count: 3, previousCount: 9 },
      { workspace: "ws_1", scope: "ws_1|ns_1", durationMs: 1_000, identifier: "u", windowStartMs: T0, count: 1, previousCount: 0 },
      { workspace: "ws_2", scope: "ws_2|key-limit", durationMs: MINUTE, identifier: "requests|key_1", windowStartMs: T0 - MINUTE, count: 2 ** 52, previousCount: 0 },
    ];
    const chunk = encodeChunk(rows);
    expect(chunk.windows).toBe(3);
    expect(chunk.expiresMs).toBe(T0 + 2 * MINUTE);
    expect(decodeChunk(chunk.data)).toEqual(rows);
  });

  test("a chunk of an unknown format is refused, not misread", () => {
    expect(() => decodeChunk('{"v":3,"scopes":[],"windows":[]}')).toThrow(/format 3/);
  });

  test("counter names of the first format split into scope and identifier at the second bar", () => {
    expect(splitLegacyCounter("ws_1|rlns_2|user|x")).toEqual({ workspace: "ws_1", scope: "ws_1|rlns_2", identifier: "user|x" });
    expect(splitLegacyCounter("ws_1|key-limit|per|second|key_3")).toEqual({ workspace: "ws_1", scope: "ws_1|key-limit", identifier: "per|second|key_3" });
    expect(splitLegacyCounter("no-bars")).toBeUndefined();
    expect(splitLegacyCounter("ws_1|ns|")).toBeUndefined();
  });
});

describe("restore replays the log", () => {
  test("after many flushes, each counter comes back with its latest window", () => {
    const a = t.fresh();
    for (let round = 1; round <= 20; round++) {
      for (let i = 0; i < 50; i++) if (i % round === 0) a.limiter.check(req(`u${i}`));
      a.store.flush(t.clock.now());
    }
    expect(t.logRows()).toBe(20);
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(b.limiter.size).toBe(50);
    for (let i = 0; i < 50; i++) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(a.limiter, `u${i}`));
  });

  test("a flush larger than one chunk is several chunks, written together", () => {
    const a = t.fresh();
    for (let i = 0; i < 10_000; i++) a.limiter.check(req(`u${i}`, 1 + (i % 5)));
    expect(a.store.flush(t.clock.now())).toBe(10_000);
    expect(t.logRows()).toBe(3);
    const b = t.fresh();
    expect(b.store.restore(t.clock.now())).toBe(10_000);
    expect(remaining(b.limiter, "u9999")).toBe(1_000 - 5);
  });

  test("a crash loses exactly the changes since the last flush, nothing before it", () => {
    const a = t.fresh();
    a.limiter.check(req("early", 7));
    a.store.flush(t.clock.now());
    t.clock.advance(1_000);
    a.limiter.check(req("early", 1));
    a.limiter.check(req("middle", 2));
    a.store.flush(t.clock.now());
    t.clock.advance(1_000);
    a.limiter.check(req("early", 100)); // after the last flush: the one interval a crash may lose
    a.limiter.check(req("late", 3));
    const b = t.fresh(); // no flush, no stop: a kill -9
    b.store.restore(t.clock.now());
    expect(remaining(b.limiter, "early")).toBe(1_000 - 8);
    expect(remaining(b.limiter, "middle")).toBe(1_000 - 2);
    expect(remaining(b.limiter, "late")).toBe(1_000);
  });
});

describe("the periodic flush, in steps", () => {
  const spendMany = (limiter: SlidingWindowLimiter, n: number) => { for (let i = 0; i < n; i++) limiter.check(req(`u${i}`, 1 + (i % 4))); };

  test("writes one chunk per step; after the last step a restore sees every window", () => {
    const a = t.fresh();
    spendMany(a.limiter, 10_000);
    a.store.beginFlush();
    expect(a.store.flushQueued).toBe(true);
    expect(a.store.flushStep(t.clock.now())).toBe(true);
    expect(t.logRows()).toBe(1);
    a.limiter.check(req("u9999", 100)); // changed after it was queued: written as it is when its chunk is
    expect(a.store.flushStep(t.clock.now())).toBe(true);
    expect(a.store.flushStep(t.clock.now())).toBe(false);
    expect(a.store.flushQueued).toBe(false);
    expect(t.loggedWindows()).toBe(10_000);
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(b.limiter.size).toBe(10_000);
    expect(remaining(b.limiter, "u9999")).toBe(1_000 - 4 - 100);
  });

  test("the flush on stop writes what is still queued along with what changed since", () => {
    const a = t.fresh();
    spendMany(a.limiter, 10_000);
    a.store.beginFlush();
    a.store.flushStep(t.clock.now());
    a.limiter.check(req("late", 5));
    expect(a.store.flush(t.clock.now())).toBe(10_000 - 4_096 + 1);
    expect(a.store.flushQueued).toBe(false);
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(b.limiter.size).toBe(10_001);
  });

  test("a failed step puts every queued window back for the next flush", () => {
    const a = t.fresh();
    spendMany(a.limiter, 10_000);
    a.store.beginFlush();
    a.store.flushStep(t.clock.now());
    t.storage.sqlite.run("ALTER TABLE ratelimit_log RENAME TO rl_away");
    expect(() => a.store.flushStep(t.clock.now())).toThrow();
    t.storage.sqlite.run("ALTER TABLE rl_away RENAME TO ratelimit_log");
    expect(a.store.flushQueued).toBe(false);
    a.store.beginFlush();
    while (a.store.flushStep(t.clock.now()));
    expect(t.loggedWindows()).toBe(10_000);
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(b.limiter.size).toBe(10_000);
  });
});

describe("compaction", () => {
  /** 30,000 counters flushed over five rounds: 150,000 logged windows, more than 4 × the 25,000 floor. */
  function grownLog(a = t.fresh()) {
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 30_000; i++) a.limiter.check(req(`u${i}`, 1 + ((i + round) % 3)));
      a.store.flush(t.clock.now());
    }
    return a;
  }

  test("is due once the log outgrows the live windows, and then holds only the live windows", () => {
    const a = t.fresh();
    for (let i = 0; i < 1_000; i++) a.limiter.check(req(`small${i}`));
    a.store.flush(t.clock.now());
    expect(a.store.compactionDue()).toBe(false);
    const big = grownLog(a);
    expect(big.store.compactionDue()).toBe(true);
    big.store.compactNow(t.clock.now());
    expect(big.store.compactionDue()).toBe(false);
    expect(t.loggedWindows()).toBe(31_000);
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(b.limiter.size).toBe(31_000);
    for (const i of [0, 1, 2, 12_345, 29_999]) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(big.limiter, `u${i}`));
  });

  test("runs in bounded steps; changes flushed between steps win over the snapshot", () => {
    const a = grownLog();
    let steps = 0;
    while (a.store.compactStep(t.clock.now())) {
      steps++;
      a.limiter.check(req(`u${steps}`, 10));
      a.store.flush(t.clock.now());
    }
    expect(steps).toBeGreaterThan(5);
    const b = t.fresh();
    b.store.restore(t.clock.now());
    for (let i = 0; i <= steps + 1; i++) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(a.limiter, `u${i}`));
  });

  test("a crash in the middle leaves a log that restores every count", () => {
    const a = grownLog();
    for (let i = 0; i < 4; i++) a.store.compactStep(t.clock.now()); // part of the snapshot written
    a.limiter.check(req("u7", 50));
    a.store.flush(t.clock.now());
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(b.limiter.size).toBe(30_000);
    for (const i of [0, 7, 20_000, 29_999]) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(a.limiter, `u${i}`));
  });

  test("expired windows are left out of the snapshot", () => {
    const a = grownLog();
    a.limiter.check({ ...req("short"), durationMs: 1_000 });
    a.store.flush(t.clock.now());
    t.clock.advance(2_000);
    a.store.compactNow(t.clock.now());
    expect(t.loggedWindows()).toBe(30_000);
  });
});

describe("rows of the first storage format", () => {
  const insertLegacy = (counter: string, count: number, durationMs = MINUTE, windowStartMs = T0) => t.storage.sqlite.run(
    "INSERT INTO ratelimit_windows (counter, duration_ms, window_start_ms, count, previous_count, expires_ms) VALUES (?, ?, ?, ?, 0, ?)",
    [counter, durationMs, windowStartMs, count, windowStartMs + 2 * durationMs],
  );

  test("are restored, moved into the log and deleted; later starts read them from the log", () => {
    insertLegacy("ws_1|ns_1|legacy", 4);
    insertLegacy("ws_1|key-limit|requests|key_1", 2);
    insertLegacy("ws_1|ns_1|expired", 9, 1_000, T0 - 5_000);
    const a = t.fresh();
    expect(a.store.restore(t.clock.now())).toBe(2);
    expect(remaining(a.limiter, "legacy")).toBe(1_000 - 4);
    expect(remaining(a.limiter, "requests|key_1", "ws_1|key-limit")).toBe(1_000 - 2);
    expect(t.storage.sqlite.query("SELECT * FROM ratelimit_windows").all()).toEqual([]);
    expect(t.loggedWindows()).toBe(2);
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(remaining(b.limiter, "legacy")).toBe(1_000 - 4);
  });

  test("a log window of the same counter is newer and wins", () => {
    insertLegacy("ws_1|ns_1|both", 4);
    const a = t.fresh();
    a.limiter.check(req("both", 6));
    a.store.flush(t.clock.now());
    const b = t.fresh();
    b.store.restore(t.clock.now());
    expect(remaining(b.limiter, "both")).toBe(1_000 - 6);
  });
});
