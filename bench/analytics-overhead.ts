/**
 * What the verification event pipeline costs keys.verifyKey: the same `tollgate serve` on copies of
 * the same data dir, with TOLLGATE_ANALYTICS=on and =off, for two workloads: a plain key (the
 * all-in-memory hot path) and a permission query with a credit spend. Target: the pipeline costs
 * less than 5% throughput.
 *
 * How: both servers run for the whole workload, and they take turns in short slices (wrk, 50
 * connections, loopback), in the order off-on, on-off, off-on, …; the one not measured is paused
 * (SIGSTOP), so that all its threads, the event writer's included, work only in its own slices and
 * none of its work lands in the other's. This machine's speed swings over tens of seconds; slices
 * of a few seconds put both servers through the same swings, where rounds of a fresh server each
 * (this benchmark before) gave per-round ratios far apart. Servers that run throughout are also
 * past their JIT warm-up, as a service is. A server's speed also depends on its process (how its
 * code was compiled, where its memory landed: the same on/off pair read differently from one run
 * to the next), so each mode runs BENCH_OVERHEAD_PROCESSES servers, each on its
 * own copy of the data dir, and the slices go round them. Each workload first verifies every
 * key once on both, so the slices measure cached keys, where the pipeline's share of a verification
 * is largest. The result is the ratio of all requests answered in all slices, with the per-pair
 * ratios' quartiles for the spread, and each server's CPU time per request (all its threads, and its
 * main thread, from /proc; the "on" server's last flush included).
 */
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ANALYTICS_DATABASE_FILE } from "../src/storage/data-dir.ts";
import { openStorage } from "../src/storage/db.ts";
import { cpuMs, median, postRandomBodiesLua, startServer, tempDir, wrk, type Child, type WrkResult } from "./lib.ts";
import { seedKeys, type Seeded } from "./seed.ts";

/** Its own variable: BENCH_KEYS is verify.ts's list of key counts, and `bun run bench` passes it to every suite. */
const KEY_COUNT = Number(process.env.BENCH_OVERHEAD_KEYS ?? 1_000);
if (!Number.isInteger(KEY_COUNT) || KEY_COUNT < 1) throw new Error(`BENCH_OVERHEAD_KEYS must be a positive integer, got ${process.env.BENCH_OVERHEAD_KEYS}`);
const SLICE_SECONDS = Number(process.env.BENCH_SLICE_SECONDS ?? 2);
/** Slices per server: BENCH_SLICES, else as long in all as BENCH_ROUNDS rounds of BENCH_SECONDS (the other suites' settings), 10 at least. */
const SLICES = Number(process.env.BENCH_SLICES ?? Math.max(10, Math.round((Number(process.env.BENCH_ROUNDS ?? 3) * Number(process.env.BENCH_SECONDS ?? 10)) / SLICE_SECONDS)));
if (![SLICES, SLICE_SECONDS].every((n) => Number.isInteger(n) && n >= 1)) throw new Error("BENCH_SLICES and BENCH_SLICE_SECONDS must be positive integers");

/** Servers per mode, each a process of its own on a copy of the data dir. */
const PROCESSES = Number(process.env.BENCH_OVERHEAD_PROCESSES ?? 2);
if (!Number.isInteger(PROCESSES) || PROCESSES < 1) throw new Error(`BENCH_OVERHEAD_PROCESSES must be a positive integer, got ${process.env.BENCH_OVERHEAD_PROCESSES}`);

/** The workloads to run: `plain`, `spend` or both (the default), comma-separated. */
const WORKLOADS = (process.env.BENCH_OVERHEAD_WORKLOADS ?? "plain,spend").split(",");
if (WORKLOADS.some((w) => w !== "plain" && w !== "spend")) throw new Error(`BENCH_OVERHEAD_WORKLOADS takes plain and spend, got ${process.env.BENCH_OVERHEAD_WORKLOADS}`);

const MODES = ["off", "on"] as const;
type Mode = (typeof MODES)[number];

/** A data dir seeded with `KEY_COUNT` keys, and copies of it: one per server of each mode. */
function seededDirs(credits: number | undefined): { keys: Seeded; dirs: Record<Mode, string[]> } {
  const seeded = tempDir("tollgate-bench-analytics-");
  const keys = seedKeys(seeded, KEY_COUNT, { identities: true, credits, templates: KEY_COUNT });
  const dirs = { off: [] as string[], on: [] as string[] };
  for (const mode of MODES) {
    for (let i = 0; i < PROCESSES; i++) {
      const dir = tempDir(`tollgate-bench-analytics-${mode}-`);
      cpSync(seeded, dir, { recursive: true });
      dirs[mode].push(dir);
    }
  }
  rmSync(seeded, { recursive: true, force: true });
  return { keys, dirs };
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

interface Totals {
  requests: number;
  cpuMs: number;
  mainMs: number;
  perSlice: WrkResult[];
  /** Requests per server of the mode, by its index. */
  perProcess: number[];
}

const noTotals = (): Totals => ({ requests: 0, cpuMs: 0, mainMs: 0, perSlice: [], perProcess: Array.from({ length: PROCESSES }, () => 0) });

const pause = (server: { pid: number }) => process.kill(server.pid, "SIGSTOP");
const resume = (server: { pid: number }) => process.kill(server.pid, "SIGCONT");

/** One slice of `server`: resumed, measured, paused again. */
async function slice(server: { url: string; pid: number }, lua: string, totals: Totals, mode: string, index: number): Promise<void> {
  resume(server);
  try {
    const cpuBefore = cpuMs(server.pid);
    const mainBefore = cpuMs(server.pid, server.pid);
    const result = await wrk(server.url, lua, { seconds: SLICE_SECONDS });
    // Failed requests cost less than verifications: a slice with any would understate the pipeline.
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`analytics ${mode}: ${result.non2xx} non-2xx answers and ${result.errors} socket errors`);
    totals.cpuMs += cpuMs(server.pid) - cpuBefore;
    totals.mainMs += cpuMs(server.pid, server.pid) - mainBefore;
    totals.requests += result.requests;
    totals.perProcess[index]! += result.requests;
    totals.perSlice.push(result);
  } finally {
    pause(server);
  }
}

const quartiles = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { q1: s[Math.floor((s.length - 1) / 4)]!, median: median(s), q3: s[Math.ceil((3 * (s.length - 1)) / 4)]! };
};

async function workload(name: string, lua: string, dirs: Record<Mode, string[]>): Promise<void> {
  const servers: Record<Mode, Child[]> = { off: [], on: [] };
  try {
    for (let i = 0; i < PROCESSES; i++) {
      for (const mode of MODES) {
        const server = await startServer(["bun", "run", join("src", "main.ts"), "serve"], {
          TOLLGATE_DATA_DIR: dirs[mode][i]!, TOLLGATE_PORT: "0", TOLLGATE_LOG_LEVEL: "info", TOLLGATE_ANALYTICS: mode,
        });
        servers[mode].push(server);
        await wrk(server.url, inOrderLua(lua), { seconds: 3 });
        await wrk(server.url, lua, { seconds: 3 });
        // The warm-up's last events are written before the slices start.
        await Bun.sleep(1500);
        pause(server);
      }
    }
    const totals: Record<Mode, Totals> = { on: noTotals(), off: noTotals() };
    for (let i = 0; i < SLICES; i++) {
      // Pair i measures the servers of index i % PROCESSES, in turn off-on and on-off.
      const index = i % PROCESSES;
      for (const mode of Math.floor(i / PROCESSES) % 2 === 0 ? MODES : [...MODES].reverse()) await slice(servers[mode][index]!, lua, totals[mode], mode, index);
    }
    // The events of the last slices are written up to a flush interval later: that CPU counts too.
    for (const on of servers.on) {
      resume(on);
      const cpuBefore = cpuMs(on.pid);
      const mainBefore = cpuMs(on.pid, on.pid);
      await Bun.sleep(1500);
      totals.on.cpuMs += cpuMs(on.pid) - cpuBefore;
      totals.on.mainMs += cpuMs(on.pid, on.pid) - mainBefore;
      pause(on);
    }
    report(name, totals);
  } finally {
    for (const server of [...servers.off, ...servers.on]) {
      resume(server);
      await server.stop();
    }
  }
}

function report(name: string, totals: Record<Mode, Totals>): void {
  const seconds = SLICES * SLICE_SECONDS;
  console.log(`\n### keys.verifyKey, ${name} (${KEY_COUNT} keys, 50 connections, ${SLICES} slices of ${SLICE_SECONDS} s per mode over ${PROCESSES} server(s) each, taking turns)\n`);
  console.log("| server | requests/s | slice requests/s (q1, median, q3) | p99 ms, median slice | server CPU µs/request | main thread µs/request |\n| --- | --- | --- | --- | --- | --- |");
  for (const mode of ["off", "on"] as const) {
    const t = totals[mode];
    const rps = quartiles(t.perSlice.map((r) => r.requestsPerSec));
    console.log(`| analytics ${mode} | ${(t.requests / seconds).toFixed(0)} | ${rps.q1.toFixed(0)}, ${rps.median.toFixed(0)}, ${rps.q3.toFixed(0)} | ${median(t.perSlice.map((r) => r.p99Ms)).toFixed(2)} | ${((t.cpuMs * 1000) / t.requests).toFixed(1)} | ${((t.mainMs * 1000) / t.requests).toFixed(1)} |`);
  }
  const ratio = totals.on.requests / totals.off.requests;
  console.log(`\non/off, all requests of all slices: ${ratio.toFixed(3)} (overhead ${((1 - ratio) * 100).toFixed(1)}%, target < 5%)`);
  // A pair's two slices run back to back: their ratio shows how far one measurement can be trusted.
  const pairs = quartiles(totals.on.perSlice.map((r, i) => r.requestsPerSec / totals.off.perSlice[i]!.requestsPerSec));
  console.log(`on/off per pair of slices: q1 ${pairs.q1.toFixed(3)}, median ${pairs.median.toFixed(3)}, q3 ${pairs.q3.toFixed(3)}`);
  if (PROCESSES > 1) console.log(`on/off per pair of servers: ${totals.on.perProcess.map((n, i) => (n / totals.off.perProcess[i]!).toFixed(3)).join(", ")}`);
  const per = (t: Totals, ms: number) => (ms * 1000) / t.requests;
  const cpuOff = per(totals.off, totals.off.cpuMs);
  const cpuOn = per(totals.on, totals.on.cpuMs);
  const mainOff = per(totals.off, totals.off.mainMs);
  const mainOn = per(totals.on, totals.on.mainMs);
  console.log(`main-thread CPU per request (what bounds throughput when the writer thread has a core of its own): off ${mainOff.toFixed(1)} µs, on ${mainOn.toFixed(1)} µs (+${(mainOn - mainOff).toFixed(1)} µs, ${((mainOn / mainOff - 1) * 100).toFixed(1)}%)`);
  console.log(`server CPU per request: off ${cpuOff.toFixed(1)} µs, on ${cpuOn.toFixed(1)} µs; the pipeline costs ${(cpuOn - cpuOff).toFixed(1)} µs (${((cpuOn / cpuOff - 1) * 100).toFixed(1)}% of the server's CPU)`);
}

async function main() {
  const started = performance.now();
  const plain = seededDirs(undefined);
  const metered = seededDirs(1_000_000_000);
  console.error(`seeded ${2 * KEY_COUNT} keys in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const plainLua = postRandomBodiesLua("/v2/keys.verifyKey", plain.keys.rootKey, plain.keys.keys.map((key) => JSON.stringify({ key, tags: ["bench"] })));
  const meteredLua = postRandomBodiesLua("/v2/keys.verifyKey", metered.keys.rootKey,
    metered.keys.keys.map((key) => JSON.stringify({ key, permissions: "documents.read", credits: { cost: 1 }, tags: ["bench"] })));
  if (WORKLOADS.includes("plain")) await workload("plain key", plainLua, plain.dirs);
  if (WORKLOADS.includes("spend")) await workload("permission query + credit spend", meteredLua, metered.dirs);
  const written = (mode: Mode) => [...plain.dirs[mode], ...metered.dirs[mode]].reduce((n, dir) => n + eventsWritten(dir), 0);
  console.log(`\nevents written by the 'on' servers: ${written("on")}; by the 'off' servers: ${written("off")}`);
  for (const dir of [...MODES.flatMap((m) => plain.dirs[m]), ...MODES.flatMap((m) => metered.dirs[m])]) rmSync(dir, { recursive: true, force: true });
}

await main();
