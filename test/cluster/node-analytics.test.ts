/**
 * Analytics of cluster nodes (src/boot-cluster.ts): two nodes booted on one PostgreSQL write the
 * verifications and rate-limit decisions they answer to PostgreSQL's analytics tables, which
 * count every one of them across both nodes. A node opens no analytics.db: its data dir holds only
 * its lock, /metrics reports no database file's size (nor in-memory rate-limit windows, which are
 * in Redis), and readiness does not ask for one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boot, type Running } from "../../src/boot.ts";
import { loadConfig } from "../../src/config.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { LOCK_FILE } from "../../src/storage/instance-lock.ts";
import { clusterServers, type ClusterServers } from "../support/cluster-backend.ts";
import { TestClock } from "../support/test-clock.ts";
import { missing, skipWithout } from "../support/tools.ts";

const ROOT_KEY = `tg_root_${"a".repeat(24)}`;

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "cluster nodes' analytics"))("cluster nodes' analytics", () => {
  let servers: ClusterServers;
  const nodes: Running[] = [];
  const dirs: string[] = [];
  const clock = new TestClock(Date.UTC(2026, 2, 1, 10));

  beforeAll(async () => {
    servers = await clusterServers();
    for (let i = 0; i < 2; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), "tollgate-node-"));
      dirs.push(dataDir);
      const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PORT: "0", TOLLGATE_ROOT_KEY: ROOT_KEY, ...servers.env });
      await servers.initialise({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: ROOT_KEY });
      nodes.push(await boot({ config, logger: silentLogger, clock }));
    }
  }, 60_000);

  afterAll(async () => {
    for (const node of nodes.splice(0)) await node.stop();
    await servers?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const call = async (node: Running, path: string, body: unknown) => {
    const res = await fetch(node.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${ROOT_KEY}` }, body: JSON.stringify(body) });
    const json = await res.json() as { data: Record<string, unknown> };
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };

  test("every verification and rate-limit decision of both nodes is counted once in PostgreSQL", async () => {
    const [a, b] = nodes as [Running, Running];
    const { apiId } = await call(a, "/v2/apis.createApi", { name: "shop" });
    const { key } = await call(a, "/v2/keys.createKey", { apiId });
    for (let i = 0; i < 12; i++) await call(i % 3 === 0 ? a : b, "/v2/keys.verifyKey", { key, tags: [`n:${i % 2}`] });
    for (let i = 0; i < 7; i++) await call(i % 2 === 0 ? a : b, "/v2/ratelimit.limit", { namespace: "email", identifier: "u", limit: 4, duration: 60_000 });
    for (const node of nodes) await node.services.verificationEvents.flush();

    const sql = new SQL(servers.env.TOLLGATE_DATABASE_URL!, { max: 1 });
    try {
      const one = async (query: string) => Number((await sql.unsafe(query))[0].n);
      expect(await one(`SELECT count(*) AS n FROM analytics.verification_events`)).toBe(12);
      for (const g of ["minute", "hour", "day", "month"]) {
        expect({ g, rollup: await one(`SELECT sum("count") AS n FROM analytics.verification_rollups_${g}`) }).toEqual({ g, rollup: 12 });
        expect({ g, totals: await one(`SELECT sum("count") AS n FROM analytics.verification_totals_${g}`) }).toEqual({ g, totals: 12 });
        const [d] = await sql.unsafe(`SELECT sum(passed)::int AS passed, sum(blocked)::int AS blocked FROM analytics.ratelimit_decisions_${g}`);
        expect({ g, ...d }).toEqual({ g, passed: 4, blocked: 3 });
      }
    } finally {
      await sql.close();
    }
  });

  test("a node's data dir holds only its lock (no analytics.db), /metrics reports no database size and no in-memory windows, and readiness is 200", async () => {
    for (const dir of dirs) expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    for (const node of nodes) {
      expect((await fetch(`${node.url}/v2/readiness`)).status).toBe(200);
      const res = await fetch(`${node.url}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain("tollgate_http_requests_in_flight ");
      expect(text).not.toContain("tollgate_analytics_database_size_bytes");
      expect(text).not.toContain("tollgate_database_size_bytes");
      // Its windows are in Redis: no figures of an in-memory limiter that holds none.
      expect(text).not.toContain("tollgate_ratelimit_window");
      expect(text).toContain("tollgate_ratelimit_namespace_cache_entries ");
    }
  });
});
