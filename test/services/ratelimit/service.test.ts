/**
 * RatelimitService without HTTP: the hot path reads no SQLite once a namespace and its overrides
 * are cached, and override changes are seen by the very next check.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../../src/storage/db.ts";
import { applyMigrations } from "../../../src/storage/migrate.ts";
import { embeddedRecords, type RecordBackend } from "../../../src/storage/records/index.ts";
import { ALL_GRANTS, type Principal } from "../../../src/services/auth/index.ts";
import { RatelimitService, SlidingWindowLimiter } from "../../../src/services/ratelimit/index.ts";
import { namespaceBytes } from "../../../src/services/ratelimit/namespace-cache.ts";
import { newId } from "../../../src/lib/ids.ts";
import { answered } from "../../../src/storage/work.ts";
import { TestClock } from "../../support/test-clock.ts";

const MINUTE = 60_000;
let dir: string;
let storage: Storage;
/** The storage and records the service sees; `offline` makes every SQLite access throw. */
let seen: { storage: Storage; offline: boolean };
let service: RatelimitService;
/** A service like `service` whose namespace cache holds two namespaces. */
let small: RatelimitService;
const principal: Principal = { workspaceId: "ws_test", rootKeyId: "rk_test", permissions: new Set(ALL_GRANTS), actor: { type: "cli", id: "test" } };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-rlsvc-"));
  storage = openStorage(join(dir, "t.db"));
  applyMigrations(storage.sqlite);
  storage.sqlite.run("INSERT INTO workspaces (id, name, created_at) VALUES ('ws_test', 'test', 0)");
  seen = { storage, offline: false };
  const guarded: Storage = {
    get sqlite() { if (seen.offline) throw new Error("SQLite read on the hot path"); return storage.sqlite; },
    get db() { if (seen.offline) throw new Error("SQLite read on the hot path"); return storage.db; },
    close: () => storage.close(),
  };
  const inner = embeddedRecords(storage);
  const records: RecordBackend = {
    write(workspaceId, unit) { if (seen.offline) throw new Error("SQLite read on the hot path"); return inner.write(workspaceId, unit); },
    read(unit) { if (seen.offline) throw new Error("SQLite read on the hot path"); return inner.read(unit); },
    answersAtOnce: true,
  };
  const clock = new TestClock();
  service = new RatelimitService({ records, storage: guarded, clock, limiter: new SlidingWindowLimiter({ clock }) });
  // Room for two namespaces with short names and no overrides, not three.
  const twoNamespaces = 2.5 * namespaceBytes({ id: newId("rlns"), name: "three", scope: `ws_test|${newId("rlns")}` });
  small = new RatelimitService({
    records, storage: guarded, clock, limiter: new SlidingWindowLimiter({ clock }), namespaceCacheCaps: { totalBytes: twoNamespaces, workspaceBytes: twoNamespaces },
  });
});
afterEach(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A check, whose answer must be synchronous: the embedded path never awaits. */
const check = (identifier: string, namespace = "api") => answered(service.limit(principal, { namespace, identifier, limit: 10, duration: MINUTE }));

describe("hot path", () => {
  test("a known namespace with its overrides loaded reads no SQLite, by name or by id", async () => {
    check("warm-up");
    const override = await service.setOverride(principal, { namespace: "api", identifier: "vip_*", limit: 99, duration: MINUTE });
    check("vip_0");
    const nsId = storage.sqlite.query<{ id: string }, []>("SELECT id FROM ratelimit_namespaces").get()!.id;
    seen.offline = true;
    expect(check("vip_1")).toMatchObject({ success: true, limit: 99, overrideId: override.overrideId });
    expect(check("plain", nsId)).toMatchObject({ success: true, limit: 10 });
    expect((await service.getOverride(principal, { namespace: "api", identifier: "vip_2" })).overrideId).toBe(override.overrideId);
    expect(answered(service.multiLimit(principal, [
      { namespace: "api", identifier: "a", limit: 1, duration: MINUTE },
      { namespace: nsId, identifier: "b", limit: 1, duration: MINUTE },
    ])).passed).toBe(true);
  });

  test("an override change is seen by the next check (one reload, then cached again)", async () => {
    check("warm-up");
    await service.setOverride(principal, { namespace: "api", identifier: "u", limit: 1, duration: MINUTE });
    expect(check("u").limit).toBe(1);
    await service.setOverride(principal, { namespace: "api", identifier: "u", limit: 2, duration: MINUTE });
    expect(check("u").limit).toBe(2);
    await service.deleteOverride(principal, { namespace: "api", identifier: "u" });
    expect(check("u").limit).toBe(10);
    seen.offline = true;
    expect(check("u").limit).toBe(10);
  });

  test("forgetCached makes the next check read SQLite again", () => {
    check("warm-up");
    service.forgetCached("ws_test");
    seen.offline = true;
    expect(() => check("x")).toThrow("SQLite read on the hot path");
  });
});

describe("namespace cache bound", () => {
  const checkIn = (namespace: string) => answered(small.limit(principal, { namespace, identifier: "u", limit: 10, duration: MINUTE }));

  test("beyond its bytes per workspace, the least recently used namespace is read from SQLite again; the rest stay cached", () => {
    checkIn("one");
    checkIn("two");
    checkIn("one"); // "two" is now the least recently used
    checkIn("three");
    seen.offline = true;
    expect(checkIn("one").success).toBe(true);
    expect(checkIn("three").success).toBe(true);
    expect(() => checkIn("two")).toThrow("SQLite read on the hot path");
    seen.offline = false;
    expect(checkIn("two")).toMatchObject({ success: true, remaining: 8 });
  });
});
