import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../../src/storage/db.ts";
import { applyMigrations } from "../../../src/storage/migrate.ts";
import { RatelimitStore, SlidingWindowLimiter, type LimitRequest } from "../../../src/services/ratelimit/index.ts";
import { runRatelimitFlushOnce, runRatelimitPruneOnce } from "../../../src/jobs/ratelimit.ts";
import { TestClock } from "../../support/test-clock.ts";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute boundary

let dir: string;
let storage: Storage;
let clock: TestClock;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-rlstore-"));
  storage = openStorage(join(dir, "t.db"));
  applyMigrations(storage.sqlite);
  clock = new TestClock(T0);
});
afterEach(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

function fresh() {
  const limiter = new SlidingWindowLimiter({ clock });
  return { limiter, store: new RatelimitStore({ storage, limiter }) };
}

const req = (identifier: string, limit = 3, durationMs = MINUTE): LimitRequest => ({ scope: "ws|ns", identifier, limit, durationMs, cost: 1 });
/** Windows held by the log's chunks, superseded ones included. */
const loggedWindows = () => storage.sqlite.query<{ n: number | null }, []>("SELECT sum(windows) AS n FROM ratelimit_log").get()!.n ?? 0;

describe("flush and restore", () => {
  test("a used-up window is still used up in a new limiter restored from SQLite", () => {
    const a = fresh();
    for (let i = 0; i < 3; i++) expect(a.limiter.check(req("ws|ns|u1")).success).toBe(true);
    expect(runRatelimitFlushOnce({ store: a.store }, clock.now())).toBe(1);

    const b = fresh();
    expect(b.store.restore(clock.now())).toBe(1);
    expect(b.limiter.check(req("ws|ns|u1")).success).toBe(false);
    expect(b.limiter.check(req("ws|ns|u2")).success).toBe(true);
  });

  test("the previous window's count is kept, so the sliding weight survives a restart", () => {
    const a = fresh();
    for (let i = 0; i < 10; i++) a.limiter.check(req("c", 10));
    clock.advance(MINUTE + MINUTE / 2); // half-way into the next window: 5 of the 10 still weigh
    a.limiter.check(req("c", 10)); // moves the stored window forward
    a.store.flush(clock.now());

    const b = fresh();
    b.store.restore(clock.now());
    expect(b.limiter.check({ ...req("c", 10), cost: 0 }).remaining).toBe(10 - 5 - 1);
  });

  test("only changed windows are written; an unchanged one is not rewritten", () => {
    const { limiter, store } = fresh();
    limiter.check(req("x"));
    limiter.check(req("y"));
    expect(store.flush(clock.now())).toBe(2);
    expect(store.flush(clock.now())).toBe(0);
    limiter.check(req("x"));
    expect(store.flush(clock.now())).toBe(1);
    expect(loggedWindows()).toBe(3);
  });

  test("the same counter with two durations is two windows", () => {
    const { limiter, store } = fresh();
    limiter.check(req("same", 3, MINUTE));
    limiter.check(req("same", 3, 1000));
    expect(store.flush(clock.now())).toBe(2);
    const b = fresh();
    expect(b.store.restore(clock.now())).toBe(2);
  });

  test("a flush that fails keeps its windows and writes them, as they are by then, with the next flush", () => {
    const { limiter, store } = fresh();
    limiter.check(req("kept"));
    storage.sqlite.run("ALTER TABLE ratelimit_log RENAME TO rl_away");
    expect(() => store.flush(clock.now())).toThrow();
    storage.sqlite.run("ALTER TABLE rl_away RENAME TO ratelimit_log");
    limiter.check(req("kept"));
    expect(store.flush(clock.now())).toBe(1);
    const restored = fresh();
    restored.store.restore(clock.now());
    expect(restored.limiter.size).toBe(1);
    expect(restored.limiter.check({ ...req("kept"), cost: 0 }).remaining).toBe(1);
  });

  test("rows that no longer weigh anything are not restored", () => {
    const { limiter, store } = fresh();
    limiter.check(req("old"));
    store.flush(clock.now());
    clock.advance(2 * MINUTE);
    const b = fresh();
    expect(b.store.restore(clock.now())).toBe(0);
    expect(b.limiter.size).toBe(0);
  });
});

describe("prune", () => {
  test("drops expired windows from memory, and log chunks whose windows have all expired", () => {
    const { limiter, store } = fresh();
    limiter.check(req("short", 3, 1000));
    store.flush(clock.now());
    limiter.check(req("long", 3, MINUTE));
    store.flush(clock.now());
    clock.advance(2000);
    expect(runRatelimitPruneOnce({ store }, clock.now())).toEqual({ memory: 1, stored: 1 });
    expect(limiter.size).toBe(1);
    expect(loggedWindows()).toBe(1);
  });
});
