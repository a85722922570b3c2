/**
 * ratelimit.limit against the reference, the bare Bun.serve echo (bench/echo.ts), in the same run:
 *
 * - Throughput: wrk (50 connections, loopback) over 100,000 distinct identifiers; rounds alternate
 *   which server goes first. Besides requests/s and latency, each server's CPU time per request
 *   (user + system, all threads, from /proc, read before the run and one flush interval after it,
 *   so the flushes the run caused are counted): far steadier than requests/s on a shared machine.
 * - Memory: resident memory added per live identifier with 1,000,000 identifiers, made the way
 *   requests make them (each identifier parsed out of its own JSON body, then the real service's
 *   `limit`), so the identifier strings the limiter keeps are counted; RSS after a full GC, minus
 *   the RSS after warm-up.
 * - Accuracy: 3 × limit concurrent requests on one identifier; exactly `limit` succeed, every round.
 *
 * `run(options)` returns the numbers (for bench/index.ts); run directly, it prints the report.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildServices, openDataDir } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { systemClock } from "../src/lib/clock.ts";
import { ALL_GRANTS } from "../src/services/auth/index.ts";
import type { LimitInput } from "../src/services/ratelimit/index.ts";
import { answered } from "../src/storage/work.ts";
import { cpuMs, formatRow, median, medianRatio, ratelimitLua, startServer, startTollgate, TABLE_HEADER, tempDir, wrk, type Child, type WrkResult } from "./lib.ts";

export interface RatelimitBenchOptions {
  /** Seconds per measured wrk run (default 10). */
  seconds?: number;
  /** Measured runs per server (default 3). */
  rounds?: number;
  /** Live identifiers for the memory measure (default 1,000,000). */
  memoryIdentifiers?: number;
  /** Accuracy rounds (default 20). */
  accuracyRounds?: number;
}

export type MeasuredRun = WrkResult & { cpuUsPerRequest: number };

export interface RatelimitBenchResult {
  seconds: number;
  echo: MeasuredRun[];
  tollgate: MeasuredRun[];
  /** Median tollgate requests/s over median echo requests/s. */
  ratio: number;
  memory: { identifiers: number; beforeMiB: number; afterMiB: number; bytesPerIdentifier: number };
  accuracy: { rounds: number; limit: number; successes: number[]; exact: boolean };
}

const ROOT_KEY = `tg_bench_${"x".repeat(24)}`;
/** Waited after each run before reading the CPU: one flush interval (default 1 s) and a margin. */
const FLUSH_SETTLE_MS = 1500;

/** One measured wrk run, with the server's CPU per request. */
async function measure(server: Child, lua: string, seconds: number): Promise<MeasuredRun> {
  const before = cpuMs(server.pid);
  const result = await wrk(server.url, lua, { seconds });
  await Bun.sleep(FLUSH_SETTLE_MS);
  return { ...result, cpuUsPerRequest: ((cpuMs(server.pid) - before) * 1000) / result.requests };
}

async function throughput(opts: Required<RatelimitBenchOptions>): Promise<Pick<RatelimitBenchResult, "echo" | "tollgate" | "ratio" | "accuracy">> {
  const lua = ratelimitLua(ROOT_KEY);
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const dataDir = tempDir("tollgate-bench-rl-");
  const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: ROOT_KEY });
  try {
    await wrk(echo.url, lua, { seconds: 2 });
    await wrk(tollgate.url, lua, { seconds: 3 });
    const runs = { echo: [] as MeasuredRun[], tollgate: [] as MeasuredRun[] };
    for (let round = 0; round < opts.rounds; round++) {
      // Alternate which goes first, so drift over the run hits both alike.
      const order = round % 2 === 0 ? (["echo", "tollgate"] as const) : (["tollgate", "echo"] as const);
      for (const name of order) runs[name].push(await measure(name === "echo" ? echo : tollgate, lua, opts.seconds));
    }
    const ratio = medianRatio(runs.tollgate, runs.echo, (r) => r.requestsPerSec);
    return { ...runs, ratio, accuracy: await accuracy(tollgate.url, opts.accuracyRounds) };
  } finally {
    await tollgate.stop();
    await echo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The longest window the API accepts (30 days). */
const ACCURACY_WINDOW_MS = 2_592_000_000;
/** A round starts at least this long before the next window edge. */
const EDGE_MARGIN_MS = 10_000;

/**
 * Waits out a window edge that is near. Windows are epoch-aligned, and right after an edge the
 * previous window's count is weighed by just under 1 and floored (upstream §6.2), so a round that
 * straddled an edge could rightly pass one request more than the limit.
 */
async function clearOfWindowEdge(): Promise<void> {
  const toEdge = ACCURACY_WINDOW_MS - (Date.now() % ACCURACY_WINDOW_MS);
  if (toEdge < EDGE_MARGIN_MS) await Bun.sleep(toEdge + 100);
}

async function accuracy(url: string, rounds: number): Promise<RatelimitBenchResult["accuracy"]> {
  const limit = 100;
  const successes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await clearOfWindowEdge();
    const body = JSON.stringify({ namespace: "accuracy", identifier: `round_${round}`, limit, duration: ACCURACY_WINDOW_MS });
    const answers = await Promise.all(Array.from({ length: 3 * limit }, () => fetch(`${url}/v2/ratelimits.limit`, {
      method: "POST", headers: { authorization: `Bearer ${ROOT_KEY}`, "content-type": "application/json" }, body,
    }).then((r) => r.json() as Promise<{ data: { success: boolean } }>)));
    successes.push(answers.filter((a) => a.data.success).length);
  }
  return { rounds, limit, successes, exact: successes.every((n) => n === limit) };
}

async function settledRssMiB(): Promise<number> {
  Bun.gc(true);
  await Bun.sleep(500);
  Bun.gc(true);
  return process.memoryUsage().rss / 1024 / 1024;
}

/** Resident memory added per live identifier, in-process through the real service. */
export async function measureMemory(identifiers: number): Promise<RatelimitBenchResult["memory"]> {
  const dataDir = tempDir("tollgate-bench-rl-mem-");
  // Caps far above what a million windows take: this measures a window's memory, not the caps
  // (ratelimit-memory.ts measures those at their defaults).
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_RATELIMIT_MEMORY_MB: "4096", TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB: "4096" });
  const opened = openDataDir(config, silentLogger);
  const { storage } = opened;
  try {
    const services = buildServices(opened, config, systemClock);
    const actor = { type: "cli" as const, id: "bench" };
    answered(services.workspaces.create({ name: "default" }, actor));
    const rootKey = answered(services.workspaces.createRootKey({ workspace: "default", name: "bench", permissions: [...ALL_GRANTS] }, actor)).key;
    const principal = services.auth.authenticate(`Bearer ${rootKey}`);
    // Each body parsed as the pipeline parses it: the identifier is a fresh string, kept by the limiter.
    const limit = (i: number) => services.ratelimits.limit(principal, JSON.parse(
      `{"namespace":"memory","identifier":"user_${i}","limit":10,"duration":60000}`,
    ) as LimitInput);
    // Warm-up: the namespace, its cache entry and the code paths exist before the baseline.
    for (let i = 0; i < 1000; i++) limit(-1 - i);
    const beforeMiB = await settledRssMiB();
    for (let i = 0; i < identifiers; i++) limit(i);
    const afterMiB = await settledRssMiB();
    if (services.limiter.size !== identifiers + 1000) throw new Error(`expected ${identifiers + 1000} live counters, found ${services.limiter.size}`);
    return { identifiers, beforeMiB, afterMiB, bytesPerIdentifier: ((afterMiB - beforeMiB) * 1024 * 1024) / identifiers };
  } finally {
    opened.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(options: RatelimitBenchOptions = {}): Promise<RatelimitBenchResult> {
  const opts: Required<RatelimitBenchOptions> = {
    seconds: options.seconds ?? Number(process.env.BENCH_SECONDS ?? 10),
    rounds: options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 3),
    memoryIdentifiers: options.memoryIdentifiers ?? Number(process.env.BENCH_IDENTIFIERS ?? 1_000_000),
    accuracyRounds: options.accuracyRounds ?? 20,
  };
  const measured = await throughput(opts);
  return { seconds: opts.seconds, ...measured, memory: await measureMemory(opts.memoryIdentifiers) };
}

/** The report as markdown. */
export function report(r: RatelimitBenchResult): string {
  const row = (name: string, m: MeasuredRun) => `${formatRow(name, m)} ${m.cpuUsPerRequest.toFixed(1)} |`;
  const cpu = (runs: MeasuredRun[]) => median(runs.map((m) => m.cpuUsPerRequest));
  const lines = [
    `### ratelimit.limit (100,000 identifiers, 50 connections, ${r.echo.length} rounds of ${r.seconds} s per server)\n`,
    `${TABLE_HEADER.replace(" |\n", " | server CPU µs/request |\n")} --- |`,
    ...r.echo.map((m, i) => row(`Bun.serve echo, round ${i + 1}`, m)),
    ...r.tollgate.map((m, i) => row(`tollgate ratelimits.limit, round ${i + 1}`, m)),
    "",
    `median requests/s: echo ${median(r.echo.map((m) => m.requestsPerSec)).toFixed(0)}, tollgate ${median(r.tollgate.map((m) => m.requestsPerSec)).toFixed(0)}; `
      + `throughput ratio ${r.ratio.toFixed(2)} (target >= 0.8)`,
    `median server CPU per request: echo ${cpu(r.echo).toFixed(1)} µs, tollgate ${cpu(r.tollgate).toFixed(1)} µs (ratio ${(cpu(r.echo) / cpu(r.tollgate)).toFixed(2)})`,
    `median p99: echo ${median(r.echo.map((m) => m.p99Ms)).toFixed(2)} ms, tollgate ${median(r.tollgate.map((m) => m.p99Ms)).toFixed(2)} ms\n`,
    `### memory: ${r.memory.identifiers.toLocaleString("en")} live identifiers\n`,
    `resident memory after GC ${r.memory.beforeMiB.toFixed(0)} MiB → ${r.memory.afterMiB.toFixed(0)} MiB: `
      + `${r.memory.bytesPerIdentifier.toFixed(0)} bytes per identifier (target < 250; identifiers like "user_123456", their strings included)\n`,
    `### accuracy: ${3 * r.accuracy.limit} concurrent requests, limit ${r.accuracy.limit}, ${r.accuracy.rounds} rounds\n`,
    `successes per round: ${[...new Set(r.accuracy.successes)].join(", ")} → ${r.accuracy.exact ? "exactly the limit every round" : "NOT exact"}\n`,
  ];
  return lines.join("\n");
}

if (import.meta.main) console.log(report(await run()));
