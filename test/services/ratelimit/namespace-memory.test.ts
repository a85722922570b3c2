/**
 * The memory of cached namespaces and their overrides: bounded by bytes per workspace and in all,
 * a namespace with more overrides than its share keeps only its wildcards and looks exact
 * identifiers up in SQLite, and it answers exactly as a namespace whose overrides are all held.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../../src/storage/db.ts";
import { applyMigrations } from "../../../src/storage/migrate.ts";
import { ALL_GRANTS, type Principal } from "../../../src/services/auth/index.ts";
import { RatelimitService, SlidingWindowLimiter } from "../../../src/services/ratelimit/index.ts";
import { overrideBytes } from "../../../src/services/ratelimit/overrides.ts";
import { namespaceBytes, type NamespaceCacheCaps } from "../../../src/services/ratelimit/namespace-cache.ts";
import { SqliteOverrideStore, embeddedRecords, type RecordBackend } from "../../../src/storage/records/index.ts";
import { answered } from "../../../src/storage/work.ts";
import { TestClock } from "../../support/test-clock.ts";

const MINUTE = 60_000;
const KIB = 1024;
let dir: string;
let storage: Storage;
/** The storage and records the services see; `offline` makes every SQLite access through them throw. */
let seen: { storage: Storage; offline: boolean };
let clock: TestClock;

const principalOf = (workspaceId: string): Principal => ({
  workspaceId, rootKeyId: "rk_test", permissions: new Set(ALL_GRANTS), actor: { type: "cli", id: "test" },
});
const wsA = principalOf("ws_a");
const wsB = principalOf("ws_b");
const wsC = principalOf("ws_c");

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-nsmem-"));
  storage = openStorage(join(dir, "t.db"));
  applyMigrations(storage.sqlite);
  for (const ws of ["ws_a", "ws_b", "ws_c"]) storage.sqlite.run("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, 0)", [ws, ws]);
  seen = { storage, offline: false };
  clock = new TestClock();
});
afterEach(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

function serviceWith(caps?: NamespaceCacheCaps): RatelimitService {
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
  return new RatelimitService({ records, storage: guarded, clock, limiter: new SlidingWindowLimiter({ clock }), ...(caps ? { namespaceCacheCaps: caps } : {}) });
}

/** A service whose share is large enough that every namespace of these tests keeps all its overrides in memory. */
const holdingAll = () => serviceWith({ totalBytes: 2 ** 30, workspaceBytes: 2 ** 30 });

/** A check, whose answer must be synchronous: the embedded path never awaits. */
const check = (service: RatelimitService, p: Principal, namespace: string, identifier: string) =>
  answered(service.limit(p, { namespace, identifier, limit: 10, duration: MINUTE }));
/** A check that only reports (cost 0), so that two services' answers compare whole. */
const report = (service: RatelimitService, identifier: string) =>
  answered(service.limit(wsA, { namespace: "ns", identifier, limit: 10, duration: MINUTE, cost: 0 }));

/** Creates the namespace and stores `count` exact overrides `${prefix}${i}` in it, as setOverride would leave them. */
function storeExactOverrides(p: Principal, namespace: string, count: number, prefix = "user_"): string {
  check(holdingAll(), p, namespace, "create");
  const nsId = storage.sqlite.query<{ id: string }, [string, string]>("SELECT id FROM ratelimit_namespaces WHERE workspace_id = ? AND name = ?")
    .get(p.workspaceId, namespace)!.id;
  const insert = storage.sqlite.prepare(
    `INSERT INTO ratelimit_overrides (id, workspace_id, namespace_id, identifier, "limit", duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, 0)`,
  );
  storage.sqlite.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`rlor_${nsId}_${i}`, p.workspaceId, nsId, `${prefix}${i}`, 1000 + i, MINUTE);
  })();
  return nsId;
}

describe("a namespace with more overrides than its share", () => {
  test("a check on a namespace with 20,000 overrides holds its two wildcards, not the 20,000", async () => {
    const nsId = storeExactOverrides(wsA, "big", 20_000);
    const service = serviceWith();
    await service.setOverride(wsA, { namespace: "big", identifier: "user_*", limit: 5, duration: MINUTE });
    await service.setOverride(wsA, { namespace: "big", identifier: "admin_*", limit: 6, duration: MINUTE });
    expect(check(service, wsA, "big", "user_19999")).toMatchObject({ limit: 20_999 });
    expect(check(service, wsA, "big", "user_x")).toMatchObject({ limit: 5 });
    const entry = namespaceBytes({ id: nsId, name: "big", scope: `ws_a|${nsId}` });
    expect(service.namespaceCacheStats()).toEqual({ entries: 1, bytes: entry + overrideBytes("user_*") + overrideBytes("admin_*") });
  });

  test("exact, wildcard, replaced and deleted overrides answer as a service holding them all does, spilled in place or on load", async () => {
    // 64 KiB per workspace: a namespace holds 2 KiB of overrides, three short ones.
    const small = serviceWith({ totalBytes: 64 * KIB, workspaceBytes: 64 * KIB });
    const set = (identifier: string, limit: number) => small.setOverride(wsA, { namespace: "ns", identifier, limit, duration: MINUTE });
    const del = (identifier: string) => small.deleteOverride(wsA, { namespace: "ns", identifier });
    const probes = ["user_0", "user_5", "user_7", "user_x", "vip_user_1", "vip_x", "user_*", "vip_*", "other", ""];
    const agree = () => {
      const reference = holdingAll();
      for (const identifier of probes) expect({ identifier, ...report(small, identifier) }).toEqual({ identifier, ...report(reference, identifier) });
      // Spilled: the namespace and its wildcards, not its exact overrides.
      expect(small.namespaceCacheStats().bytes).toBeLessThan(4 * KIB);
    };
    check(small, wsA, "ns", "warm-up");
    await set("user_*", 50);
    for (let i = 0; i < 12; i++) await set(`user_${i}`, 100 + i);
    agree();
    await set("user_5", 7); // replaced exact
    await del("user_7"); // deleted exact: the wildcard applies again
    await set("vip_*", 60);
    await set("vip_user_*", 61); // the more specific of the two for vip_user_1
    agree();
    await set("user_*", 51); // replaced wildcard
    await del("vip_*"); // deleted wildcard
    agree();
    small.forgetCached();
    agree();
    await set("user_7", 9); // an exact override again, on an index built spilled
    await del("user_0");
    agree();
  });

  test("the statements of a spilled namespace read the index made for them", () => {
    const overrides = new SqliteOverrideStore(storage.db);
    const plan = (sql: string, params: unknown[]) =>
      storage.sqlite.query<{ detail: string }, never[]>(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as never[])).map((r) => r.detail).join(" / ");
    const wildcards = overrides.liveWildcardsQuery("ns").toSQL();
    expect(plan(wildcards.sql, wildcards.params)).toContain("USING INDEX ratelimit_overrides_live_wildcard_idx (namespace_id=?)");
    const counted = overrides.countLiveQuery("ns", 10).toSQL();
    expect(plan(counted.sql, counted.params)).toMatch(/USING (COVERING )?INDEX ratelimit_overrides_live_uq \(namespace_id=\?\)/);
    storeExactOverrides(wsA, "ns", 3);
    const nsId = storage.sqlite.query<{ id: string }, []>("SELECT id FROM ratelimit_namespaces").get()!.id;
    expect(overrides.prepareFindLive()(nsId, "user_2")).toMatchObject({ identifier: "user_2", limit: 1002, duration: MINUTE });
    expect(overrides.prepareFindLive()(nsId, "user_3")).toBeUndefined();
  });
});

describe("the namespace cache's bytes", () => {
  test("one workspace's many namespaces with many overrides stay within its bytes and the total; another's cached namespaces survive", async () => {
    // A namespace holds 3 KiB of overrides: five short ones, not forty long ones.
    // Two workspaces at their cap would pass the total: they must give up their own namespaces, not ws_b's.
    const caps = { totalBytes: 160 * KIB, workspaceBytes: 96 * KIB };
    const namespaces = 60;
    // Stored before the service starts, so that its cache sees only the checks below.
    for (const [p, prefix] of [[wsA, "a"], [wsC, "c"]] as const) {
      for (let i = 0; i < namespaces; i++) {
        if (i % 2 === 0) storeExactOverrides(p, `${prefix}${i}`, 40, `id_${"x".repeat(200)}_`);
        else storeExactOverrides(p, `${prefix}${i}`, 5);
      }
    }
    const service = serviceWith(caps);
    for (const ns of ["b0", "b1"]) {
      check(service, wsB, ns, "warm-up");
      await service.setOverride(wsB, { namespace: ns, identifier: "vip", limit: 99, duration: MINUTE });
      await service.setOverride(wsB, { namespace: ns, identifier: "tier_*", limit: 98, duration: MINUTE });
    }
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < namespaces; i++) {
        check(service, wsA, `a${i}`, "someone");
        check(service, wsC, `c${i}`, "someone");
        expect(service.namespaceCacheStats("ws_a").bytes).toBeLessThanOrEqual(caps.workspaceBytes);
        expect(service.namespaceCacheStats("ws_c").bytes).toBeLessThanOrEqual(caps.workspaceBytes);
        expect(service.namespaceCacheStats().bytes).toBeLessThanOrEqual(caps.totalBytes);
      }
    }
    expect(service.namespaceCacheStats("ws_a").entries).toBeGreaterThan(10);
    expect(check(service, wsA, "a1", "user_4")).toMatchObject({ limit: 1004 });
    expect(check(service, wsA, "a0", `id_${"x".repeat(200)}_39`)).toMatchObject({ limit: 1039 });
    seen.offline = true;
    for (const ns of ["b0", "b1"]) {
      expect(check(service, wsB, ns, "vip")).toMatchObject({ limit: 99 });
      expect(check(service, wsB, ns, "tier_2")).toMatchObject({ limit: 98 });
    }
  });

  test("a namespace whose overrides grow through setOverride is charged for them, within the workspace's bytes", async () => {
    const caps = { totalBytes: 32 * KIB, workspaceBytes: 32 * KIB };
    const service = serviceWith(caps);
    check(service, wsA, "grows", "warm-up");
    const before = service.namespaceCacheStats().bytes;
    await service.setOverride(wsA, { namespace: "grows", identifier: "one", limit: 1, duration: MINUTE });
    expect(service.namespaceCacheStats().bytes).toBe(before + overrideBytes("one"));
    for (let i = 0; i < 50; i++) await service.setOverride(wsA, { namespace: "grows", identifier: `id_${i}`, limit: 1, duration: MINUTE });
    // Spilled past 1 KiB of overrides: the namespace alone is charged again.
    expect(service.namespaceCacheStats().bytes).toBe(before);
    expect(check(service, wsA, "grows", "one").limit).toBe(1);
    expect(check(service, wsA, "grows", "id_49").limit).toBe(1);
  });
});
