/**
 * The cluster mode against the embedded mode on this machine: keys.verifyKey (a permission query
 * and a credit spend, 1,000 keys) on one embedded node, and on one, two and three cluster nodes
 * sharing one PostgreSQL and one Redis, with the bare Bun.serve echo in the same run. The cluster's
 * records are the embedded data dir's, moved with migrate-to-cluster's copy. Several nodes are
 * loaded together, one wrk (50 connections / nodes) each; their requests/s add up.
 * On one 2-core machine the nodes, PostgreSQL, Redis and wrk share the cores: this shows what the
 * cluster costs per request, not how it scales across machines.
 * Then keys.createKey/s at concurrency 16 on one node, embedded and cluster (cluster-create-keys.ts).
 * BENCH_SECONDS (default 5) per round, BENCH_ROUNDS (default 3) rounds; BENCH_CLUSTER_PART=verifyKey
 * or createKey runs that part alone.
 */
import { SQL } from "bun";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { masterKeyFingerprint } from "../src/lib/key-fingerprint.ts";
import { copyDataDirToPostgres } from "../src/storage/pg/copy-from-sqlite.ts";
import { migratePostgres } from "../src/storage/pg/migrate.ts";
import { startPostgres, startRedis } from "../test/support/servers.ts";
import { cpuMs, median, postRandomBodiesLua, startServer, startTollgate, tempDir, wrk, type Child, type WrkResult } from "./lib.ts";
import { seedKeys } from "./seed.ts";
import { createKeysPhase } from "./cluster-create-keys.ts";
import { verifyBody } from "./verify.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const KEYS = 1_000;
const CONNECTIONS = 50;
const PART = process.env.BENCH_CLUSTER_PART ?? "all";
if (!["all", "verifyKey", "createKey"].includes(PART)) throw new Error(`BENCH_CLUSTER_PART must be verifyKey or createKey, not ${PART}`);

interface Load {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  cpuUsPerRequest: number;
}

/** wrk against every node at once (CONNECTIONS split between them); CPU of the nodes and of `others` (PostgreSQL, Redis) per request. */
async function loadAll(nodes: Child[], lua: string, seconds: number, others: number[]): Promise<Load> {
  const pids = [...nodes.map((n) => n.pid), ...others];
  const before = pids.map((pid) => cpuMs(pid));
  const per = Math.max(1, Math.floor(CONNECTIONS / nodes.length));
  const results: WrkResult[] = await Promise.all(nodes.map((n) => wrk(n.url, lua, { seconds, connections: per })));
  const cpu = pids.reduce((sum, pid, i) => sum + (cpuMs(pid) - before[i]!), 0);
  const requestsPerSec = results.reduce((sum, r) => sum + r.requestsPerSec, 0);
  return {
    requestsPerSec,
    p50Ms: median(results.map((r) => r.p50Ms)),
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    failed: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    cpuUsPerRequest: (cpu * 1000) / (requestsPerSec * seconds),
  };
}

/** Every PID of PostgreSQL's processes (the postmaster's children included), for CPU accounting. */
function postgresPids(postmaster: number): number[] {
  const out = Bun.spawnSync(["pgrep", "-P", String(postmaster)]).stdout.toString().trim();
  return [postmaster, ...out.split("\n").filter(Boolean).map(Number)];
}

async function main(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-cluster-");
  const { rootKey, keys, apiId } = seedKeys(dataDir, KEYS, { credits: 1_000_000_000 });
  const lua = postRandomBodiesLua("/v2/keys.verifyKey", rootKey, keys.map(verifyBody));
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const nodes: Child[] = [];
  const nodeDirs: string[] = [];
  const rows: string[] = [];
  const ratios: string[] = [];
  let createKeys = "";
  try {
    const admin = new SQL(postgres.url, { max: 1 });
    await admin.unsafe("CREATE DATABASE bench");
    await admin.close();
    const databaseUrl = postgres.url.replace(/\/postgres$/, "/bench");
    await migratePostgres(databaseUrl);
    const masterKey = readFileSync(join(dataDir, "master.key"), "utf8").trim();
    // As migrate-to-cluster copies: the fingerprint of the master key makes it an initialised cluster.
    await copyDataDirToPostgres(dataDir, databaseUrl, { fingerprint: masterKeyFingerprint(Buffer.from(masterKey, "base64")) });
    const clusterEnv = {
      TOLLGATE_DATABASE_URL: databaseUrl, TOLLGATE_REDIS_URL: redis.url, TOLLGATE_ROOT_KEY: rootKey, TOLLGATE_MASTER_KEY: masterKey,
    };
    const measure = async (name: string, servers: Child[], others: number[]) => {
      const warm = await loadAll(servers, lua, 2, others);
      if (warm.failed > 0) throw new Error(`${name}: ${warm.failed} failed requests while warming up`);
      const runs: Load[] = [];
      const echoRuns: Load[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        echoRuns.push(await loadAll([echo], lua, SECONDS, []));
        runs.push(await loadAll(servers, lua, SECONDS, others));
      }
      const m = (xs: Load[], pick: (l: Load) => number) => median(xs.map(pick));
      rows.push(`| ${name} | ${m(runs, (r) => r.requestsPerSec).toFixed(0)} | ${m(runs, (r) => r.p50Ms).toFixed(2)} | ${m(runs, (r) => r.p99Ms).toFixed(2)} | ${runs.reduce((n, r) => n + r.failed, 0)} | ${m(runs, (r) => r.cpuUsPerRequest).toFixed(1)} | ${m(echoRuns, (r) => r.requestsPerSec).toFixed(0)} | ${(m(runs, (r) => r.requestsPerSec) / m(echoRuns, (r) => r.requestsPerSec)).toFixed(2)} |`);
    };

    const backing = () => [...postgresPids(postgres.pid), redis.pid];
    const startNodes = async (count: number) => {
      while (nodes.length < count) {
        const dir = tempDir("tollgate-bench-node-");
        nodeDirs.push(dir);
        nodes.push(await startTollgate({ ...clusterEnv, TOLLGATE_DATA_DIR: dir }));
      }
    };
    if (PART !== "createKey") {
      const embedded = await startTollgate({ TOLLGATE_DATA_DIR: dataDir });
      try {
        await measure("embedded, one node", [embedded], []);
      } finally {
        await embedded.stop();
      }
      for (let count = 1; count <= 3; count++) {
        await startNodes(count);
        await measure(`cluster, ${count} node${count > 1 ? "s" : ""}`, nodes, backing());
      }
      ratios.push("requests/s of the nodes together over the echo's (one process, 50 connections) in the same rounds; CPU counts the nodes and, in the cluster, PostgreSQL's and Redis's processes");
    }
    if (PART !== "verifyKey") {
      await startNodes(3);
      const embedded = await startTollgate({ TOLLGATE_DATA_DIR: dataDir });
      try {
        createKeys = await createKeysPhase({ embedded, cluster: nodes, backing, rootKey, apiId, seconds: SECONDS, rounds: ROUNDS });
      } finally {
        await embedded.stop();
      }
    }
  } finally {
    for (const node of nodes) await node.stop();
    await echo.stop();
    await redis.stop();
    await postgres.stop();
    for (const dir of [dataDir, ...nodeDirs]) rmSync(dir, { recursive: true, force: true });
  }
  if (rows.length > 0) {
    console.log(`### keys.verifyKey: the cluster mode against the embedded mode (${KEYS.toLocaleString("en")} keys, permission query + credit spend, ${CONNECTIONS} connections in all, ${ROUNDS} × ${SECONDS} s)\n`);
    console.log("| setup | requests/s | p50 ms | p99 ms | failed | CPU µs/request | echo requests/s | ratio to echo |\n| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const row of rows) console.log(row);
    console.log(`\n${ratios.join("\n")}\n`);
  }
  if (createKeys !== "") console.log(createKeys);
}

await main();
