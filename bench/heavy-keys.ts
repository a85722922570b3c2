/**
 * Heavy keys against their neighbours: a key holding 100 roles of 1,000 permissions each and a key
 * with a 1 MB meta, both in workspace B, and a plain key of workspace A. Reports the heavy key's own
 * verification latency (single sequential requests with a permission query: the first, which loads
 * it, then p50/p99/max from the cache) and A's p50/p99 (wrk, one connection) alone, while 4 clients
 * verify the heavy key and while 8 clients verify the 1 MB-meta key, each beside the bare Bun.serve
 * echo under A's script in the same run. 127.0.0.1 only; BENCH_SECONDS (default 5) per phase, so a
 * run takes about a minute after the seeding.
 */
import { join } from "node:path";
import { rmSync } from "node:fs";
import { buildServices, openDataDir } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { systemClock } from "../src/lib/clock.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { ALL_GRANTS } from "../src/services/auth/index.ts";
import { inTransaction } from "../src/storage/db.ts";
import { answered } from "../src/storage/work.ts";
import { cpuMs, median, postRandomBodiesLua, recordsMeta, startServer, startTollgate, stopOnSignal, tempDir, wrk, type Child, type WrkResult } from "./lib.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROLES = 100;
const PERMISSIONS_PER_ROLE = 1_000;
const META_BYTES = 1_000_000;
const SEQUENTIAL_VERIFICATIONS = 300;
/** A query that needs a permission held only through the last role, a wildcard and an OR. */
const HEAVY_QUERY = `(svc.r${ROLES - 1}.p${PERMISSIONS_PER_ROLE - 1} AND svc.r0.p0) OR nothing.held`;

interface Seeded {
  rootA: string;
  rootB: string;
  plainKeys: string[];
  heavyKey: string;
  metaKey: string;
}

/** Two workspaces through the real services, in the data dir `tollgate serve` then opens. */
export function seed(dataDir: string): Seeded {
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const opened = openDataDir(config, silentLogger);
  try {
    const services = buildServices(opened, config, systemClock);
    const actor = { type: "cli" as const, id: "bench" };
    const workspace = (name: string) => {
      answered(services.workspaces.create({ name }, actor));
      const rootKey = answered(services.workspaces.createRootKey({ workspace: name, name: "bench", permissions: [...ALL_GRANTS] }, actor)).key;
      const principal = services.auth.authenticate(`Bearer ${rootKey}`);
      const { apiId } = answered(services.apis.createApi(principal, { name }));
      return { rootKey, principal, apiId };
    };
    const a = workspace("neighbour");
    const plainKeys = Array.from({ length: 100 }, () => answered(services.keys.createKey(a.principal, { apiId: a.apiId, permissions: ["documents.read"] })).key);
    const b = workspace("heavy");
    const roles = inTransaction(opened.storage, () => Array.from({ length: ROLES }, (_, r) => {
      const permissions = Array.from({ length: PERMISSIONS_PER_ROLE }, (_, p) => `svc.r${r}.p${p}`);
      answered(services.rbac.createRole(b.principal, { name: `role${r}`, permissions }));
      return `role${r}`;
    }));
    const heavyKey = answered(services.keys.createKey(b.principal, { apiId: b.apiId, roles, permissions: ["svc.r0.*", "direct.read"] })).key;
    const metaKey = answered(services.keys.createKey(b.principal, { apiId: b.apiId, meta: recordsMeta(META_BYTES) })).key;
    return { rootA: a.rootKey, rootB: b.rootKey, plainKeys, heavyKey, metaKey };
  } finally {
    opened.close();
  }
}

/** Verifies `key` one request at a time, `count` times; the latency of each, the answer read in full. */
async function sequential(url: string, rootKey: string, key: string, count: number): Promise<{ ms: number[]; code: string; bytes: number }> {
  const ms: number[] = [];
  let code = "";
  let bytes = 0;
  const body = JSON.stringify({ key, permissions: HEAVY_QUERY });
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await fetch(`${url}/v2/keys.verifyKey`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body });
    const buffer = await res.arrayBuffer();
    ms.push(performance.now() - started);
    bytes = buffer.byteLength;
    if (i === 0) code = (JSON.parse(new TextDecoder().decode(buffer)) as { data: { code: string } }).data.code;
  }
  return { ms, code, bytes };
}

const percentile = (xs: readonly number[], p: number): number => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

interface Phase {
  name: string;
  tollgate: WrkResult;
  echo: WrkResult;
}

/** A's script on tollgate, then on the echo, each while `load` (if any) runs against tollgate for the same time. */
async function phase(name: string, echo: Child, server: Child, neighbourLua: string, load?: { lua: string; connections: number }): Promise<Phase> {
  const beside = (target: Child) => load === undefined
    ? Promise.resolve(undefined)
    : wrk(server.url, load.lua, { seconds: SECONDS + 1, connections: load.connections }).then(() => target);
  const run = async (target: Child) => {
    const loaded = beside(target);
    // The load starts first and outlasts the measurement by a second.
    if (load !== undefined) await Bun.sleep(500);
    const measured = await wrk(target.url, neighbourLua, { seconds: SECONDS, connections: 1 });
    await loaded;
    return measured;
  };
  return { name, tollgate: await run(server), echo: await run(echo) };
}

async function main(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-heavy-");
  const seedStarted = performance.now();
  const seeded = seed(dataDir);
  const seedMs = performance.now() - seedStarted;
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const stops: Array<() => Promise<void>> = [() => echo.stop()];
  const release = stopOnSignal(stops);
  try {
    const server = await startTollgate({ TOLLGATE_DATA_DIR: dataDir });
    stops.push(() => server.stop());
    // The cold load, with workspace A verifying one request at a time beside it: A's slowest answer is how long the load held the loop.
    let loading = true;
    const probe = (async () => {
      const ms: number[] = [];
      while (loading) ms.push(...(await sequential(server.url, seeded.rootA, seeded.plainKeys[0]!, 1)).ms);
      return ms;
    })();
    const cold = await sequential(server.url, seeded.rootB, seeded.heavyKey, 1);
    loading = false;
    const besideCold = await probe;
    const cpuPerRequest = async (rootKey: string, key: string, count: number) => {
      const before = cpuMs(server.pid, server.pid);
      const timed = await sequential(server.url, rootKey, key, count);
      return { ...timed, cpuMs: (cpuMs(server.pid, server.pid) - before) / count };
    };
    const warm = await cpuPerRequest(seeded.rootB, seeded.heavyKey, SEQUENTIAL_VERIFICATIONS);
    const metaWarm = await cpuPerRequest(seeded.rootB, seeded.metaKey, 100);
    const small = await cpuPerRequest(seeded.rootA, seeded.plainKeys[0]!, 300);
    const neighbourLua = postRandomBodiesLua("/v2/keys.verifyKey", seeded.rootA, seeded.plainKeys.map((key) => JSON.stringify({ key, permissions: "documents.read" })));
    const heavyLua = postRandomBodiesLua("/v2/keys.verifyKey", seeded.rootB, [JSON.stringify({ key: seeded.heavyKey, permissions: HEAVY_QUERY })]);
    const metaLua = postRandomBodiesLua("/v2/keys.verifyKey", seeded.rootB, [JSON.stringify({ key: seeded.metaKey })]);
    await wrk(server.url, neighbourLua, { seconds: 2, connections: 1 });
    const phases = [
      await phase("A alone", echo, server, neighbourLua),
      await phase("A while 4 clients verify the heavy key", echo, server, neighbourLua, { lua: heavyLua, connections: 4 }),
      await phase("A while 8 clients verify the 1 MB-meta key", echo, server, neighbourLua, { lua: metaLua, connections: 8 }),
    ];
    await server.stop();
    stops.pop();
    const f = (n: number) => n.toFixed(2);
    console.log([
      `### Heavy keys (bench/heavy-keys.ts, ${SECONDS} s a phase; seeded in ${(seedMs / 1000).toFixed(1)} s)\n`,
      `Heavy key: ${ROLES} roles × ${PERMISSIONS_PER_ROLE} permissions, query \`${HEAVY_QUERY}\` → ${warm.code}, answer ${(warm.bytes / 1e6).toFixed(2)} MB.`,
      `Single sequential requests (client-side, answer read in full): first (cold load) ${f(cold.ms[0]!)} ms, while A's slowest of ${besideCold.length} sequential verifications beside it took ${f(Math.max(...besideCold))} ms; then p50 ${f(median(warm.ms))} / p99 ${f(percentile(warm.ms, 0.99))} / max ${f(Math.max(...warm.ms))} ms over ${SEQUENTIAL_VERIFICATIONS}, server main-thread CPU ${f(warm.cpuMs)} ms a request.`,
      `1 MB-meta key (answer ${(metaWarm.bytes / 1e6).toFixed(2)} MB): p50 ${f(median(metaWarm.ms))} / max ${f(Math.max(...metaWarm.ms))} ms over 100, CPU ${f(metaWarm.cpuMs)} ms a request; A's small key: p50 ${f(median(small.ms))} ms, CPU ${f(small.cpuMs)} ms a request.\n`,
      "Workspace A's verifyKey (wrk, 1 connection) and the echo under the same script with the same load on tollgate beside it:\n",
      "| phase | A p50 ms | A p99 ms | echo p50 ms | echo p99 ms | p99 / echo p99 | A requests/s | non-2xx + errors |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      ...phases.map((p) => `| ${p.name} | ${f(p.tollgate.p50Ms)} | ${f(p.tollgate.p99Ms)} | ${f(p.echo.p50Ms)} | ${f(p.echo.p99Ms)} | ${(p.tollgate.p99Ms / p.echo.p99Ms).toFixed(1)} | ${p.tollgate.requestsPerSec.toFixed(0)} | ${p.tollgate.non2xx + p.tollgate.errors} |`),
    ].join("\n"));
  } finally {
    for (const stop of [...stops].reverse()) await stop().catch(() => {});
    release();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
