/**
 * The window log: restore replays many flushes with the latest window of a counter winning,
 * compaction keeps the log near the live state without losing a count (also when interrupted),
 * a crash loses at most the changes since the last flush, and rows of the first storage format
 * are restored and moved into the log.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../../src/storage/db.ts";
import { applyMigrations } from "../../../src/storage/migrate.ts";
import { RatelimitStore, SlidingWindowLimiter, type LimitRequest } from "../../../src/services/ratelimit/index.ts";
import { decodeChunk, encodeChunk, splitLegacyCounter } from "../../../src/services/ratelimit/window-log.ts";
import { TestClock } from "../../support/test-clock.ts";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute boundary

let dir: string;
let storage: Storage;
let clock: TestClock;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-rllog-"));
  storage = openStorage(join(dir, "t.db"));
  applyMigrations(storage.sqlite);
  clock = new TestClock(T0);
});
afterEach(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A limiter and store on the shared database: a new one is what a restart sees. */
function fresh() {
  const limiter = new SlidingWindowLimiter({ clock });
  return { limiter, store: new RatelimitStore({ storage, limiter }) };
}

const req = (identifier: string, cost = 1, scope = "ws_1|ns_1"): LimitRequest => ({ scope, identifier, limit: 1_000, durationMs: MINUTE, cost });
const remaining = (limiter: SlidingWindowLimiter, identifier: string, scope?: string) => limiter.check(req(identifier, 0, scope)).remaining;
const logRows = () => storage.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM ratelimit_log").get()!.n;
const loggedWindows = () => storage.sqlite.query<{ n: number | null }, []>("SELECT sum(windows) AS n FROM ratelimit_log").get()!.n ?? 0;

describe("chunk encoding", () => {
  test("a chunk decodes to the windows it was made of, scopes and durations kept apart", () => {
    const rows = [
      { scope: "ws_1|ns_1", durationMs: MINUTE, identifier: "u|with|bars", windowStartMs: T0, count: 3, previousCount: 9 },
      { scope: "ws_1|ns_1", durationMs: 1_000, identifier: "u", windowStartMs: T0, count: 1, previousCount: 0 },
      { scope: "ws_2|key-limit", durationMs: MINUTE, identifier: "requests|key_1", windowStartMs: T0 - MINUTE, count: 2 ** 52, previousCount: 0 },
    ];
    const chunk = encodeChunk(rows);
    expect(chunk.windows).toBe(3);
    expect(chunk.expiresMs).toBe(T0 + 2 * MINUTE);
    expect(decodeChunk(chunk.data)).toEqual(rows);
  });

  test("a chunk of an unknown format is refused, not misread", () => {
    expect(() => decodeChunk('{"v":2,"scopes":[],"windows":[]}')).toThrow(/format 2/);
  });

  test("counter names of the first format split into scope and identifier at the second bar", () => {
    expect(splitLegacyCounter("ws_1|rlns_2|user|x")).toEqual({ scope: "ws_1|rlns_2", identifier: "user|x" });
    expect(splitLegacyCounter("ws_1|key-limit|per|second|key_3")).toEqual({ scope: "ws_1|key-limit", identifier: "per|second|key_3" });
    expect(splitLegacyCounter("no-bars")).toBeUndefined();
    expect(splitLegacyCounter("ws_1|ns|")).toBeUndefined();
  });
});

describe("restore replays the log", () => {
  test("after many flushes, each counter comes back with its latest window", () => {
    const a = fresh();
    for (let round = 1; round <= 20; round++) {
      for (let i = 0; i < 50; i++) if (i % round === 0) a.limiter.check(req(`u${i}`));
      a.store.flush(clock.now());
    }
    expect(logRows()).toBe(20);
    const b = fresh();
    b.store.restore(clock.now());
    expect(b.limiter.size).toBe(50);
    for (let i = 0; i < 50; i++) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(a.limiter, `u${i}`));
  });

  test("a flush larger than one chunk is several chunks, written together", () => {
    const a = fresh();
    for (let i = 0; i < 10_000; i++) a.limiter.check(req(`u${i}`, 1 + (i % 5)));
    expect(a.store.flush(clock.now())).toBe(10_000);
    expect(logRows()).toBe(3);
    const b = fresh();
    expect(b.store.restore(clock.now())).toBe(10_000);
    expect(remaining(b.limiter, "u9999")).toBe(1_000 - 5);
  });

  test("a crash loses exactly the changes since the last flush, nothing before it", () => {
    const a = fresh();
    a.limiter.check(req("early", 7));
    a.store.flush(clock.now());
    clock.advance(1_000);
    a.limiter.check(req("early", 1));
    a.limiter.check(req("middle", 2));
    a.store.flush(clock.now());
    clock.advance(1_000);
    a.limiter.check(req("early", 100)); // after the last flush: the one interval a crash may lose
    a.limiter.check(req("late", 3));
    const b = fresh(); // no flush, no stop: a kill -9
    b.store.restore(clock.now());
    expect(remaining(b.limiter, "early")).toBe(1_000 - 8);
    expect(remaining(b.limiter, "middle")).toBe(1_000 - 2);
    expect(remaining(b.limiter, "late")).toBe(1_000);
  });
});

describe("the periodic flush, in steps", () => {
  const spendMany = (limiter: SlidingWindowLimiter, n: number) => { for (let i = 0; i < n; i++) limiter.check(req(`u${i}`, 1 + (i % 4))); };

  test("writes one chunk per step; after the last step a restore sees every window", () => {
    const a = fresh();
    spendMany(a.limiter, 10_000);
    a.store.beginFlush();
    expect(a.store.flushQueued).toBe(true);
    expect(a.store.flushStep(clock.now())).toBe(true);
    expect(logRows()).toBe(1);
    a.limiter.check(req("u9999", 100)); // changed after it was queued: written as it is when its chunk is
    expect(a.store.flushStep(clock.now())).toBe(true);
    expect(a.store.flushStep(clock.now())).toBe(false);
    expect(a.store.flushQueued).toBe(false);
    expect(loggedWindows()).toBe(10_000);
    const b = fresh();
    b.store.restore(clock.now());
    expect(b.limiter.size).toBe(10_000);
    expect(remaining(b.limiter, "u9999")).toBe(1_000 - 4 - 100);
  });

  test("the flush on stop writes what is still queued along with what changed since", () => {
    const a = fresh();
    spendMany(a.limiter, 10_000);
    a.store.beginFlush();
    a.store.flushStep(clock.now());
    a.limiter.check(req("late", 5));
    expect(a.store.flush(clock.now())).toBe(10_000 - 4_096 + 1);
    expect(a.store.flushQueued).toBe(false);
    const b = fresh();
    b.store.restore(clock.now());
    expect(b.limiter.size).toBe(10_001);
  });

  test("a failed step puts every queued window back for the next flush", () => {
    const a = fresh();
    spendMany(a.limiter, 10_000);
    a.store.beginFlush();
    a.store.flushStep(clock.now());
    storage.sqlite.run("ALTER TABLE ratelimit_log RENAME TO rl_away");
    expect(() => a.store.flushStep(clock.now())).toThrow();
    storage.sqlite.run("ALTER TABLE rl_away RENAME TO ratelimit_log");
    expect(a.store.flushQueued).toBe(false);
    a.store.beginFlush();
    while (a.store.flushStep(clock.now()));
    expect(loggedWindows()).toBe(10_000);
    const b = fresh();
    b.store.restore(clock.now());
    expect(b.limiter.size).toBe(10_000);
  });
});

describe("compaction", () => {
  /** 30,000 counters flushed over five rounds: 150,000 logged windows, more than 4 × the 25,000 floor. */
  function grownLog(a = fresh()) {
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 30_000; i++) a.limiter.check(req(`u${i}`, 1 + ((i + round) % 3)));
      a.store.flush(clock.now());
    }
    return a;
  }

  test("is due once the log outgrows the live windows, and then holds only the live windows", () => {
    const a = fresh();
    for (let i = 0; i < 1_000; i++) a.limiter.check(req(`small${i}`));
    a.store.flush(clock.now());
    expect(a.store.compactionDue()).toBe(false);
    const big = grownLog(a);
    expect(big.store.compactionDue()).toBe(true);
    big.store.compactNow(clock.now());
    expect(big.store.compactionDue()).toBe(false);
    expect(loggedWindows()).toBe(31_000);
    const b = fresh();
    b.store.restore(clock.now());
    expect(b.limiter.size).toBe(31_000);
    for (const i of [0, 1, 2, 12_345, 29_999]) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(big.limiter, `u${i}`));
  });

  test("runs in bounded steps; changes flushed between steps win over the snapshot", () => {
    const a = grownLog();
    let steps = 0;
    while (a.store.compactStep(clock.now())) {
      steps++;
      a.limiter.check(req(`u${steps}`, 10));
      a.store.flush(clock.now());
    }
    expect(steps).toBeGreaterThan(5);
    const b = fresh();
    b.store.restore(clock.now());
    for (let i = 0; i <= steps + 1; i++) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(a.limiter, `u${i}`));
  });

  test("a crash in the middle leaves a log that restores every count", () => {
    const a = grownLog();
    for (let i = 0; i < 4; i++) a.store.compactStep(clock.now()); // part of the snapshot written
    a.limiter.check(req("u7", 50));
    a.store.flush(clock.now());
    const b = fresh();
    b.store.restore(clock.now());
    expect(b.limiter.size).toBe(30_000);
    for (const i of [0, 7, 20_000, 29_999]) expect(remaining(b.limiter, `u${i}`)).toBe(remaining(a.limiter, `u${i}`));
  });

  test("expired windows are left out of the snapshot", () => {
    const a = grownLog();
    a.limiter.check({ ...req("short"), durationMs: 1_000 });
    a.store.flush(clock.now());
    clock.advance(2_000);
    a.store.compactNow(clock.now());
    expect(loggedWindows()).toBe(30_000);
  });
});

describe("rows of the first storage format", () => {
  const insertLegacy = (counter: string, count: number, durationMs = MINUTE, windowStartMs = T0) => storage.sqlite.run(
    "INSERT INTO ratelimit_windows (counter, duration_ms, window_start_ms, count, previous_count, expires_ms) VALUES (?, ?, ?, ?, 0, ?)",
    [counter, durationMs, windowStartMs, count, windowStartMs + 2 * durationMs],
  );

  test("are restored, moved into the log and deleted; later starts read them from the log", () => {
    insertLegacy("ws_1|ns_1|legacy", 4);
    insertLegacy("ws_1|key-limit|requests|key_1", 2);
    insertLegacy("ws_1|ns_1|expired", 9, 1_000, T0 - 5_000);
    const a = fresh();
    expect(a.store.restore(clock.now())).toBe(2);
    expect(remaining(a.limiter, "legacy")).toBe(1_000 - 4);
    expect(remaining(a.limiter, "requests|key_1", "ws_1|key-limit")).toBe(1_000 - 2);
    expect(storage.sqlite.query("SELECT * FROM ratelimit_windows").all()).toEqual([]);
    expect(loggedWindows()).toBe(2);
    const b = fresh();
    b.store.restore(clock.now());
    expect(remaining(b.limiter, "legacy")).toBe(1_000 - 4);
  });

  test("a log window of the same counter is newer and wins", () => {
    insertLegacy("ws_1|ns_1|both", 4);
    const a = fresh();
    a.limiter.check(req("both", 6));
    a.store.flush(clock.now());
    const b = fresh();
    b.store.restore(clock.now());
    expect(remaining(b.limiter, "both")).toBe(1_000 - 6);
  });
});
