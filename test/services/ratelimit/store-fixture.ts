/**
 * For the persistence tests: a migrated database in a temporary directory and a TestClock, new for
 * every test; `fresh()` is a limiter and store on that database, and a second `fresh()` is what a
 * restart (or a start after kill -9) sees.
 */
import { afterEach, beforeEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../../src/storage/db.ts";
import { applyMigrations } from "../../../src/storage/migrate.ts";
import { RatelimitStore, SlidingWindowLimiter, type WindowCaps } from "../../../src/services/ratelimit/index.ts";
import { TestClock } from "../../support/test-clock.ts";

export interface StoreFixture {
  readonly storage: Storage;
  readonly clock: TestClock;
  /** `caps` of the limiter (default none); `compactFloorWindows` of the store (default its own). */
  fresh(opts?: { caps?: WindowCaps; compactFloorWindows?: number }): { limiter: SlidingWindowLimiter; store: RatelimitStore };
  /** Windows held by the log's chunks, superseded ones included. */
  loggedWindows(): number;
  /** Chunks in the log. */
  logRows(): number;
}

export function storeFixture(startMs: number): StoreFixture {
  let dir = "";
  let storage: Storage | undefined;
  let clock: TestClock | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "tollgate-rlstore-"));
    storage = openStorage(join(dir, "t.db"));
    applyMigrations(storage.sqlite);
    clock = new TestClock(startMs);
  });
  afterEach(() => {
    storage?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const f: StoreFixture = {
    get storage() { return storage!; },
    get clock() { return clock!; },
    fresh(opts = {}) {
      const limiter = new SlidingWindowLimiter({ clock: f.clock, ...(opts.caps ? { caps: opts.caps } : {}) });
      const floor = opts.compactFloorWindows === undefined ? {} : { compactFloorWindows: opts.compactFloorWindows };
      return { limiter, store: new RatelimitStore({ storage: f.storage, limiter, ...floor }) };
    },
    loggedWindows: () => f.storage.sqlite.query<{ n: number | null }, []>("SELECT sum(windows) AS n FROM ratelimit_log").get()!.n ?? 0,
    logRows: () => f.storage.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM ratelimit_log").get()!.n,
  };
  return f;
}
