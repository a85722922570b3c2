/**
 * What a restart brings back is bounded like the live state: no window of a length the service no
 * longer uses, at most the caps (the windows used last), and a log whose size stays within
 * (COMPACT_FACTOR + 2 + f) × max(live windows, compaction floor) however many windows come and go
 * (f = 0 here: each compaction runs whole between two flushes).
 */
import { describe, expect, test } from "bun:test";
import type { LimitRequest, SlidingWindowLimiter } from "../../../src/services/ratelimit/index.ts";
import { COMPACT_FACTOR } from "../../../src/services/ratelimit/store.ts";
import { scopeBytes, windowBytes } from "../../../src/services/ratelimit/workspace-windows.ts";
import { storeFixture } from "./store-fixture.ts";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute boundary
const SCOPE = "ws_1|ns_1";

const t = storeFixture(T0);

const req = (identifier: string, cost = 1, durationMs = MINUTE): LimitRequest =>
  ({ workspace: "ws_1", scope: SCOPE, identifier, limit: 1_000, durationMs, cost });
/** Caps that hold `windows` windows of two-character identifiers in SCOPE. */
const capsFor = (windows: number) => {
  const bytes = scopeBytes(SCOPE) + windows * windowBytes("a0");
  return { workspaceBytes: bytes, totalBytes: bytes };
};
const identifiers = (limiter: SlidingWindowLimiter) => {
  const found: string[] = [];
  for (let slot = 0; slot < limiter.slotBound; slot++) {
    const row = limiter.windowOf(slot);
    if (row) found.push(row.identifier);
  }
  return found.sort();
};

describe("restore", () => {
  test("windows longer than 30 days or shorter than a second (stored by an older version) are not restored", () => {
    const a = t.fresh();
    a.limiter.check(req("forever", 1, Number.MAX_SAFE_INTEGER));
    a.limiter.check(req("month", 1, 2_592_000_001));
    a.limiter.check(req("blink", 1, 999));
    a.limiter.check(req("kept", 1, 2_592_000_000));
    a.store.flush(t.clock.now());
    const b = t.fresh();
    expect(b.store.restore(t.clock.now())).toBe(1);
    expect(identifiers(b.limiter)).toEqual(["kept"]);
  });

  test("a state over the caps (a restart with smaller caps) restores at most the caps, keeping the windows used last", () => {
    const a = t.fresh();
    for (let i = 0; i < 10; i++) a.limiter.check(req(`a${i}`));
    a.store.flush(t.clock.now());
    t.clock.advance(1_000);
    for (const i of [4, 1]) a.limiter.check(req(`a${i}`, 0)); // used, not charged: still the newest
    a.store.flush(t.clock.now());
    const b = t.fresh({ caps: capsFor(4) });
    expect(b.store.restore(t.clock.now())).toBe(4);
    expect(identifiers(b.limiter)).toEqual(["a1", "a4", "a8", "a9"]);
  });

  test("after a compaction the log keeps the order of use: the snapshot writes each workspace's oldest first", () => {
    const a = t.fresh({ compactFloorWindows: 1 });
    for (let i = 0; i < 10; i++) a.limiter.check(req(`a${i}`));
    a.store.flush(t.clock.now());
    for (const i of [3, 1]) a.limiter.check(req(`a${i}`, 0));
    a.store.compactNow(t.clock.now()); // the uses above are not flushed: only the snapshot has them
    expect(t.loggedWindows()).toBe(10);
    const b = t.fresh({ caps: capsFor(2) });
    b.store.restore(t.clock.now());
    expect(identifiers(b.limiter)).toEqual(["a1", "a3"]);
  });
});

describe("compaction in steps beside evictions", () => {
  test("windows evicted, reused and used between snapshot steps: a restore gives exactly the live windows", () => {
    const a = t.fresh({ caps: capsFor(9_000), compactFloorWindows: 1 });
    for (let i = 0; i < 9_000; i++) a.limiter.check(req(`a${i}`));
    a.store.flush(t.clock.now());
    let step = 0;
    while (a.store.compactStep(t.clock.now())) {
      step++;
      for (let k = 0; k < 50; k++) a.limiter.check(req(`b${step}-${k}`, 2)); // evict the oldest, reuse their slots
      a.limiter.check(req(`a${8_999 - step}`, 0)); // used again: after the walk passed it, or before
      a.store.flush(t.clock.now());
    }
    expect(a.limiter.stats().evicted).toBeGreaterThan(0);
    const live = identifiers(a.limiter);
    const b = t.fresh({ caps: capsFor(9_000) });
    b.store.restore(t.clock.now());
    expect(identifiers(b.limiter)).toEqual(live);
    for (const identifier of live.filter((_, i) => i % 97 === 0)) {
      expect(b.limiter.check(req(identifier, 0)).remaining).toBe(a.limiter.check(req(identifier, 0)).remaining);
    }
  });

  test("a snapshot step whose write fails is written by the next step; nothing is lost", () => {
    const a = t.fresh({ compactFloorWindows: 1 });
    for (let i = 0; i < 10_000; i++) a.limiter.check(req(`a${i}`));
    a.store.flush(t.clock.now());
    a.store.compactStep(t.clock.now());
    t.storage.sqlite.run("ALTER TABLE ratelimit_log RENAME TO rl_away");
    expect(() => a.store.compactStep(t.clock.now())).toThrow();
    t.storage.sqlite.run("ALTER TABLE rl_away RENAME TO ratelimit_log");
    a.store.compactNow(t.clock.now());
    expect(t.loggedWindows()).toBe(10_000);
    const b = t.fresh();
    expect(b.store.restore(t.clock.now())).toBe(10_000);
  });
});

describe("the log stays bounded", () => {
  test(`many windows evicted and flushed: the log never holds more than (${COMPACT_FACTOR} + 2) × max(live, floor) windows`, () => {
    const cap = 20;
    const floor = 50;
    const a = t.fresh({ caps: capsFor(cap), compactFloorWindows: floor });
    const bound = (COMPACT_FACTOR + 2) * Math.max(cap, floor);
    let most = 0;
    for (let i = 0; i < 5_000; i++) {
      a.limiter.check(req(`u${i}`)); // longer than two characters: fewer than `cap` fit
      if (i % 7 === 0) {
        a.store.flush(t.clock.now());
        if (a.store.compactionDue()) a.store.compactNow(t.clock.now());
      }
      most = Math.max(most, t.loggedWindows());
    }
    expect(a.limiter.stats().evicted).toBeGreaterThan(4_000);
    expect(most).toBeLessThanOrEqual(bound);
    const b = t.fresh({ caps: capsFor(cap) });
    expect(b.store.restore(t.clock.now())).toBeLessThanOrEqual(cap);
  });
});
