/**
 * What the verification event pipeline costs keys.verifyKey: the same `tollgate serve` on copies of
 * the same data dir, with TOLLGATE_ANALYTICS=on and =off, measured in alternating rounds in one run
 * (wrk, 50 connections, loopback), for two workloads: a plain key (the all-in-memory hot path) and
 * a permission query with a credit spend. Each round first verifies every key once, so the rounds
 * measure cached keys, where the pipeline's share of a verification is largest. Prints a Markdown
 * table, the median ratio per workload, and how many events the "on" server wrote. Target: the
 * pipeline costs less than 5% throughput. Throughput on a shared 2-core machine swings by tens of
 * percent between rounds, so each round also reports the server's CPU time per request (all its
 * threads, from /proc, the event writer's last flush included): the difference between on and off is
 * what the pipeline costs, whatever else runs on the machine.
 */
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ANALYTICS_DATABASE_FILE } from "../src/storage/data-dir.ts";
import { openStorage } from "../src/storage/db.ts";
import { cpuMs, formatRow, median, postRandomBodiesLua, startServer, TABLE_HEADER, tempDir, wrk, type WrkResult } from "./lib.ts";
import { seedKeys, type Seeded } from "./seed.ts";

/** Its own variable: BENCH_KEYS is verify.ts's list of key counts, and `bun run bench` passes it to every suite. */
const KEY_COUNT = Number(process.env.BENCH_OVERHEAD_KEYS ?? 1_000);
if (!Number.isInteger(KEY_COUNT) || KEY_COUNT < 1) throw new Error(`BENCH_OVERHEAD_KEYS must be a positive integer, got ${process.env.BENCH_OVERHEAD_KEYS}`);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** A data dir seeded with `KEY_COUNT` keys, and a copy of it for the "off" server. */
function seededPair(credits: number | undefined): { keys: Seeded; on: string; off: string } {
  const on = tempDir("tollgate-bench-analytics-on-");
  const keys = seedKeys(on, KEY_COUNT, { identities: true, credits, templates: KEY_COUNT });
  const off = tempDir("tollgate-bench-analytics-off-");
  cpSync(on, off, { recursive: true });
  return { keys, on, off };
}

function eventsWritten(dataDir: string): number {
  const storage = openStorage(join(dataDir, ANALYTICS_DATABASE_FILE), { readonly: true });
  try {
    return storage.sqlite.query<{ n: number }, []>("SELECT coalesce(sum(event_count), 0) AS n FROM verification_event_batches").get()?.n ?? 0;
  } finally {
    storage.close();
  }
}

/** The warm-up script: wrk's one thread walks the bodies in order, so every key is verified (and cached) once. */
function inOrderLua(random: string): string {
  const walk = random.replace("math.randomseed(42)", "local position = 0")
    .replace("request = function()", "request = function()\n  position = position + 1")
    .replace("bodies[math.random(#bodies)]", "bodies[position % #bodies + 1]");
  if (walk === random || walk.includes("math.random")) throw new Error("the wrk script changed shape; update inOrderLua");
  return walk;
}

type Round = WrkResult & { cpuUsPerRequest: number; mainThreadUsPerRequest: number };

/** One measured round against a fresh server on `dataDir`. */
async function round(dataDir: string, analytics: "on" | "off", lua: string): Promise<Round> {
  const server = await startServer(["bun", "run", join("src", "main.ts"), "serve"], {
    TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PORT: "0", TOLLGATE_LOG_LEVEL: "info", TOLLGATE_ANALYTICS: analytics,
  });
  try {
    await wrk(server.url, inOrderLua(lua), { seconds: 3 });
    const cpuBefore = cpuMs(server.pid);
    const mainBefore = cpuMs(server.pid, server.pid);
    const result = await wrk(server.url, lua, { seconds: SECONDS });
    // Failed requests cost less than verifications: a round with any would understate the pipeline.
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`analytics ${analytics}: ${result.non2xx} non-2xx answers and ${result.errors} socket errors`);
    // Events are written up to a flush interval late: let the last flush happen before reading the CPU.
    await Bun.sleep(1500);
    const requests = result.requestsPerSec * SECONDS;
    const cpuUsPerRequest = ((cpuMs(server.pid) - cpuBefore) * 1000) / requests;
    const mainThreadUsPerRequest = ((cpuMs(server.pid, server.pid) - mainBefore) * 1000) / requests;
    return { ...result, cpuUsPerRequest, mainThreadUsPerRequest };
  } finally {
    await server.stop();
  }
}

async function workload(name: string, lua: string, dirs: { on: string; off: string }): Promise<void> {
  const results: Record<"on" | "off", Round[]> = { on: [], off: [] };
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which goes first, so drift over the run (thermal, page cache) hits both alike.
    const order: Array<"on" | "off"> = i % 2 === 0 ? ["on", "off"] : ["off", "on"];
    for (const mode of order) results[mode].push(await round(dirs[mode], mode, lua));
  }
  console.log(`\n### keys.verifyKey, ${name} (${KEY_COUNT} keys, 50 connections, ${ROUNDS} rounds of ${SECONDS} s)\n`);
  console.log(`${TABLE_HEADER.replace(" |\n", " | server CPU µs/request | main thread µs/request |\n")} --- | --- |`);
  for (const mode of ["off", "on"] as const) {
    results[mode].forEach((r, i) => console.log(`${formatRow(`analytics ${mode}, round ${i + 1}`, r)} ${r.cpuUsPerRequest.toFixed(1)} | ${r.mainThreadUsPerRequest.toFixed(1)} |`));
  }
  const on = median(results.on.map((r) => r.requestsPerSec));
  const off = median(results.off.map((r) => r.requestsPerSec));
  const cpuOn = median(results.on.map((r) => r.cpuUsPerRequest));
  const cpuOff = median(results.off.map((r) => r.cpuUsPerRequest));
  console.log(`\nmedian requests/s: off ${off.toFixed(0)}, on ${on.toFixed(0)}; on/off ${(on / off).toFixed(3)} (overhead ${((1 - on / off) * 100).toFixed(1)}%, target < 5%)`);
  // A round's two servers run back to back, so their ratio is less exposed to the machine's drift
  // over the whole run than the ratio of the medians; the spread shows how far one run can be trusted.
  const pairs = results.on.map((r, i) => r.requestsPerSec / results.off[i]!.requestsPerSec);
  console.log(`on/off per round (its two servers back to back): ${pairs.map((p) => p.toFixed(3)).join(", ")}; median ${median(pairs).toFixed(3)} (overhead ${((1 - median(pairs)) * 100).toFixed(1)}%)`);
  const mainOn = median(results.on.map((r) => r.mainThreadUsPerRequest));
  const mainOff = median(results.off.map((r) => r.mainThreadUsPerRequest));
  console.log(`median main-thread CPU per request (what bounds throughput when the writer thread has a core of its own): off ${mainOff.toFixed(1)} µs, on ${mainOn.toFixed(1)} µs (+${((mainOn / mainOff - 1) * 100).toFixed(1)}%)`);
  console.log(`median server CPU per request: off ${cpuOff.toFixed(1)} µs, on ${cpuOn.toFixed(1)} µs; the pipeline costs ${(cpuOn - cpuOff).toFixed(1)} µs (${((cpuOn / cpuOff - 1) * 100).toFixed(1)}% of the server's CPU)`);
}

async function main() {
  const started = performance.now();
  const plain = seededPair(undefined);
  const metered = seededPair(1_000_000_000);
  console.error(`seeded ${2 * KEY_COUNT} keys in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const plainLua = postRandomBodiesLua("/v2/keys.verifyKey", plain.keys.rootKey, plain.keys.keys.map((key) => JSON.stringify({ key, tags: ["bench"] })));
  const meteredLua = postRandomBodiesLua("/v2/keys.verifyKey", metered.keys.rootKey,
    metered.keys.keys.map((key) => JSON.stringify({ key, permissions: "documents.read", credits: { cost: 1 }, tags: ["bench"] })));
  await workload("plain key", plainLua, plain);
  await workload("permission query + credit spend", meteredLua, metered);
  const written = (mode: "on" | "off") => eventsWritten(plain[mode]) + eventsWritten(metered[mode]);
  console.log(`\nevents written by the 'on' servers: ${written("on")}; by the 'off' servers: ${written("off")}`);
  for (const dir of [plain.on, plain.off, metered.on, metered.off]) rmSync(dir, { recursive: true, force: true });
}

await main();
