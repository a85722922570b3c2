/**
 * RatelimitService in the cluster mode: its records on PostgreSQL and its windows in Redis, both
 * started for the file, several services standing for several nodes (records and Redis clients of
 * their own on the same servers). A check there answers promises; what must hold is what holds
 * embedded: a new namespace is made once, overrides apply to checks, and a limit is exact.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPg } from "../../../src/storage/pg/db.ts";
import { clusterRecords } from "../../../src/storage/pg/records/index.ts";
import { ALL_GRANTS, type Principal } from "../../../src/services/auth/index.ts";
import { RatelimitService, RedisWindowLimiter, redisWindowClient, type LimitOutcome } from "../../../src/services/ratelimit/index.ts";
import type { NamespaceCacheCaps } from "../../../src/services/ratelimit/namespace-cache.ts";
import { overrideBytes } from "../../../src/services/ratelimit/overrides.ts";
import { postgresForFile } from "../../cluster/pg-database.ts";
import { SERVER_START_TIMEOUT_MS, startRedis, type TestServer } from "../../support/servers.ts";
import { TestClock } from "../../support/test-clock.ts";
import { missing, requireTool, skipWithout } from "../../support/tools.ts";

const MINUTE = 60_000;
const T0 = 1_700_000_000_000;
const WS = "ws_cluster";
const principal: Principal = { workspaceId: WS, rootKeyId: "rk_test", permissions: new Set(ALL_GRANTS), actor: { type: "cli", id: "test" } };

const unavailable = skipWithout(missing.postgres(), "PostgreSQL") || skipWithout(missing.redis(), "the Redis window store");

describe.skipIf(unavailable)("RatelimitService on PostgreSQL and Redis", () => {
  const closers: Array<() => Promise<void>> = [];
  const pg = postgresForFile(async () => {
    for (const close of closers.splice(0)) await close();
  });
  let redis: TestServer | undefined;

  beforeAll(async () => {
    requireTool(missing.redis());
    redis = await startRedis();
  }, SERVER_START_TIMEOUT_MS);
  afterAll(async () => {
    await redis?.stop();
  });

  /**
   * `count` nodes on a fresh database (holding workspace WS) and a fresh key prefix; `node` adds one,
   * `rows` counts in the database.
   */
  async function cluster(count: number) {
    const url = await pg.freshDatabase();
    const sql = pg.client(url);
    await sql`INSERT INTO workspaces (id, name, created_at) VALUES (${WS}, ${WS}, 1)`;
    const clock = new TestClock(T0);
    const keyPrefix = `test:${crypto.randomUUID()}:`;
    const node = async (caps?: NamespaceCacheCaps) => {
      const { db, close } = openPg(url, 4);
      const client = redisWindowClient(redis!.url);
      await client.connect();
      closers.push(async () => {
        client.close();
        await close();
      });
      const limiter = new RedisWindowLimiter({ client, clock, keyPrefix });
      return new RatelimitService({ records: clusterRecords(db), clock, limiter, ...(caps ? { namespaceCacheCaps: caps } : {}) });
    };
    const nodes: RatelimitService[] = [];
    for (let i = 0; i < count; i++) nodes.push(await node());
    const rows = async (query: string) => Number((await sql.unsafe(query))[0].n);
    return { nodes, node, rows };
  }

  const check = (node: RatelimitService, identifier: string, limit = 10, namespace = "api"): Promise<LimitOutcome> =>
    Promise.resolve(node.limit(principal, { namespace, identifier, limit, duration: MINUTE }));

  test("concurrent first checks of a new namespace on three nodes create it once, with one audit entry", async () => {
    const { nodes, rows } = await cluster(3);
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => check(nodes[i % 3]!, `user_${i}`, 10, "fresh")));
    expect(outcomes.every((o) => o.success)).toBe(true);
    expect(await rows("SELECT count(*) AS n FROM ratelimit_namespaces WHERE name = 'fresh'")).toBe(1);
    expect(await rows("SELECT count(*) AS n FROM audit_logs WHERE event = 'ratelimit.create_namespace'")).toBe(1);
    const batch = await nodes[1]!.multiLimit(principal, [
      { namespace: "fresh", identifier: "a", limit: 1, duration: MINUTE }, { namespace: "other", identifier: "a", limit: 1, duration: MINUTE },
    ]);
    expect(batch.passed).toBe(true);
    expect(await rows("SELECT count(*) AS n FROM ratelimit_namespaces")).toBe(2);
  });

  test("overrides set through one node apply to checks on every node, exact and wildcard, also from a spilled index", async () => {
    const { nodes, node } = await cluster(2);
    const [a, b] = nodes as [RatelimitService, RatelimitService];
    // 32 KiB per workspace: a namespace's overrides may hold 1 KiB, two rows; this node's index of three spills.
    const spilling = await node({ totalBytes: 32 * 1024, workspaceBytes: 32 * 1024 });
    await check(a, "warm-up");
    const exact = await a.setOverride(principal, { namespace: "api", identifier: "vip", limit: 3, duration: MINUTE });
    const wildcard = await a.setOverride(principal, { namespace: "api", identifier: "team_*", limit: 2, duration: MINUTE });
    await a.setOverride(principal, { namespace: "api", identifier: "other", limit: 4, duration: MINUTE });
    for (const checked of [a, b, spilling]) {
      expect(await check(checked, "vip")).toMatchObject({ limit: 3, overrideId: exact.overrideId });
      expect(await check(checked, "team_red")).toMatchObject({ limit: 2, overrideId: wildcard.overrideId });
      expect((await check(checked, "nobody")).overrideId).toBeUndefined();
    }
    // The spilled index holds the wildcard alone; the exact overrides were found in PostgreSQL per check.
    expect(spilling.namespaceCacheStats(WS).bytes).toBe(a.namespaceCacheStats(WS).bytes - overrideBytes("vip") - overrideBytes("other"));
  });

  test("a deleted override stops applying on another node once that node hears of the change", async () => {
    const { nodes } = await cluster(2);
    const [a, b] = nodes as [RatelimitService, RatelimitService];
    await check(a, "warm-up");
    await a.setOverride(principal, { namespace: "api", identifier: "vip", limit: 3, duration: MINUTE });
    expect((await check(b, "vip")).limit).toBe(3);
    await a.deleteOverride(principal, { namespace: "api", identifier: "vip" });
    expect((await check(a, "vip")).limit).toBe(10);
    expect((await check(b, "vip")).limit).toBe(3);
    b.workspaceChanged(WS);
    expect((await check(b, "vip")).limit).toBe(10);
  });

  test("300 concurrent checks of limit 100 over three nodes: exactly 100 pass", async () => {
    const { nodes, rows } = await cluster(3);
    const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => check(nodes[i % 3]!, "hot", 100, "burst")));
    expect(outcomes.filter((o) => o.success)).toHaveLength(100);
    expect(new Set(outcomes.filter((o) => o.success).map((o) => o.remaining)).size).toBe(100);
    expect(await rows("SELECT count(*) AS n FROM ratelimit_namespaces WHERE name = 'burst'")).toBe(1);
  });
});
