/**
 * The soak: tollgate under a mixed workload (bench/soak/mix.ts) for SOAK_SECONDS (default 600) at
 * half its measured capacity, at a constant rate. First wrk measures the capacity for the same mix
 * (10 s, 50 connections, after a warm-up); then a constant-rate client (bench/soak/constant-rate.ts)
 * sends at half of it while the server's resident memory is sampled from /proc every 10 s.
 * Pass: zero errors (any non-2xx, any socket error) and resident memory in the last minute less
 * than 5% above the minute after the warm-up (the first 60 s). Exits 1 otherwise when run directly.
 * The report also gives the two parts of resident memory apart, anonymous (the heaps) and
 * file-backed (mapped files, SQLite's WAL index among them), as each grows for its own reasons.
 * SOAK_RATE sets the rate instead (requests/s), for a machine whose capacity swings with other work.
 */
import { rmSync } from "node:fs";
import { cpuMs, formatRow, residentKiB, startTollgate, stopOnSignal, TABLE_HEADER, tempDir, wrk, type WrkResult } from "./lib.ts";
import { constantRate, Histogram, type ConstantRateResult } from "./soak/constant-rate.ts";
import { buildMix, mixLua } from "./soak/mix.ts";
import { seedSoak } from "./soak/seed.ts";

export interface SoakOptions {
  seconds?: number;
  warmupSeconds?: number;
  keys?: number;
  capacitySeconds?: number;
  sampleSeconds?: number;
  /** Requests per second instead of half the measured capacity. */
  rate?: number;
}

export interface RssSample {
  atSeconds: number;
  rssKiB: number;
  anonKiB: number;
  fileKiB: number;
}

export interface SoakResult {
  capacity: WrkResult;
  rate: number;
  load: ConstantRateResult;
  errors: number;
  samples: RssSample[];
  rssAfterWarmupKiB: number;
  rssAtEndKiB: number;
  growthPercent: number;
  /** Length of the two windows whose medians are compared (60 s, less in a short run). */
  windowSeconds: number;
  /** Least-squares trend of the samples after the warm-up, as % of their mean over that span: a leak shows here whatever the swings. */
  trendPercent: number;
  /** The same two medians for each part of VmRSS: anonymous memory (heaps) and file-backed (mapped files, e.g. SQLite's -shm). */
  parts: { anon: [number, number]; file: [number, number] };
  serverCpuUsPerRequest: number;
  passed: boolean;
  markdown: string;
}

function errorsOf(load: ConstantRateResult): number {
  let errors = 0;
  for (const stats of load.byOperation.values()) {
    errors += stats.socketErrors;
    for (const [status, n] of stats.statuses) if (status < 200 || status > 299) errors += n;
  }
  return errors;
}

const mib = (kib: number) => (kib / 1024).toFixed(1);
const change = ([from, to]: [number, number]) => `${mib(from)} → ${mib(to)} MiB (${to >= from ? "+" : ""}${mib(to - from)} MiB)`;
const singleAt = (samples: RssSample[], at: number) => (samples.find((s) => s.atSeconds >= at) ?? samples[samples.length - 1]!).rssKiB;

function operationsTable(load: ConstantRateResult): string[] {
  const rows = ["| operation | sent | p50 ms | p99 ms | statuses | socket errors | denials |", "| --- | --- | --- | --- | --- | --- | --- |"];
  for (const [name, s] of load.byOperation) {
    const statuses = [...s.statuses].map(([status, n]) => `${status}: ${n}`).join(", ");
    rows.push(`| ${name} | ${s.sent} | ${s.latency.quantile(0.5).toFixed(2)} | ${s.latency.quantile(0.99).toFixed(2)} | ${statuses} | ${s.socketErrors} | ${s.denials} |`);
  }
  return rows;
}

function report(r: Omit<SoakResult, "markdown" | "passed">, keys: number, warmup: number, passed: boolean): string {
  const all = new Histogram();
  for (const s of r.load.byOperation.values()) all.merge(s.latency);
  return [
    `### soak: ${r.load.seconds} s at half capacity (${keys.toLocaleString("en")} keys, analytics on)`,
    "",
    `Capacity for the mix (wrk, 50 connections, 10 s):`,
    "",
    TABLE_HEADER,
    formatRow("tollgate, mixed workload", r.capacity),
    "",
    `Constant rate ${r.rate} requests/s (open loop, latency counted from each request's scheduled moment):`,
    `${r.load.sent} requests sent, **${r.errors} errors** (non-2xx or socket errors), ${r.load.lateSends} sent more than 10 ms late; ` +
      `p50 ${all.quantile(0.5).toFixed(2)} ms, p99 ${all.quantile(0.99).toFixed(2)} ms (from the actual send: p50 ${r.load.fromSend.quantile(0.5).toFixed(2)} ms, ` +
      `p99 ${r.load.fromSend.quantile(0.99).toFixed(2)} ms); CPU per request: server ${r.serverCpuUsPerRequest.toFixed(1)} µs, client ${r.load.clientCpuUsPerRequest.toFixed(1)} µs.`,
    "",
    ...operationsTable(r.load),
    "",
    `Resident memory (VmRSS), median of the samples in the ${r.windowSeconds} s after the warm-up (${warmup} s) and in the last ${r.windowSeconds} s: ` +
      `${mib(r.rssAfterWarmupKiB)} MiB → ${mib(r.rssAtEndKiB)} MiB, **${r.growthPercent >= 0 ? "+" : ""}${r.growthPercent.toFixed(1)}%** (target < 5%). ` +
      `Single samples: ${mib(singleAt(r.samples, warmup))} MiB at ${warmup} s, ${mib(r.samples[r.samples.length - 1]!.rssKiB)} MiB at the end; ` +
      `least-squares trend after the warm-up ${r.trendPercent >= 0 ? "+" : ""}${r.trendPercent.toFixed(1)}%. ${passed ? "Passed." : "**Failed.**"} ` +
      `Its parts, same medians: anonymous ${change(r.parts.anon)}, file-backed ${change(r.parts.file)}.`,
    "",
    "| s | VmRSS MiB | anonymous MiB | file MiB |",
    "| --- | --- | --- | --- |",
    ...r.samples.map((s) => `| ${s.atSeconds} | ${mib(s.rssKiB)} | ${mib(s.anonKiB)} | ${mib(s.fileKiB)} |`),
    "",
  ].join("\n");
}

/** Samples the resident memory of `pid` now and every `everySeconds`; stop() takes a last sample. */
function sampleRss(pid: number, everySeconds: number): { samples: RssSample[]; stop(): void } {
  const start = performance.now();
  const samples: RssSample[] = [];
  const take = () => {
    const m = residentKiB(pid);
    samples.push({ atSeconds: Math.round((performance.now() - start) / 1000), rssKiB: m.rss, anonKiB: m.anon, fileKiB: m.file });
  };
  take();
  const timer = setInterval(take, everySeconds * 1000);
  const stop = () => {
    clearInterval(timer);
    if (samples[samples.length - 1]!.atSeconds !== Math.round((performance.now() - start) / 1000)) take();
  };
  return { samples, stop };
}

/** The least-squares line through `samples`: its rise from the first to the last, as % of their mean. */
function trend(samples: RssSample[]): number {
  if (samples.length < 2) return 0;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const mx = mean(samples.map((s) => s.atSeconds));
  const my = mean(samples.map((s) => s.rssKiB));
  const slope = samples.reduce((a, s) => a + (s.atSeconds - mx) * (s.rssKiB - my), 0) / samples.reduce((a, s) => a + (s.atSeconds - mx) ** 2, 0);
  return ((slope * (samples[samples.length - 1]!.atSeconds - samples[0]!.atSeconds)) / my) * 100;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Growth between the minute after the warm-up and the last minute, each the median of its samples:
 * garbage collection swings single samples by ±10%, more than the 5% being looked for.
 */
function rssGrowth(
  samples: RssSample[], warmup: number, seconds: number,
): Pick<SoakResult, "rssAfterWarmupKiB" | "rssAtEndKiB" | "growthPercent" | "windowSeconds" | "trendPercent" | "parts"> {
  const window = Math.max(1, Math.min(60, Math.floor((seconds - warmup) / 2)));
  const within = (from: number, to: number) => samples.filter((s) => s.atSeconds >= from && s.atSeconds <= to);
  const early = within(warmup, warmup + window);
  const late = within(seconds - window, Number.POSITIVE_INFINITY);
  const medians = (of: (s: RssSample) => number): [number, number] => [
    median(early.length ? early.map(of) : [of(samples[0]!)]), median(late.length ? late.map(of) : [of(samples[samples.length - 1]!)]),
  ];
  const [rssAfterWarmupKiB, rssAtEndKiB] = medians((s) => s.rssKiB);
  return { rssAfterWarmupKiB, rssAtEndKiB, growthPercent: ((rssAtEndKiB - rssAfterWarmupKiB) / rssAfterWarmupKiB) * 100, windowSeconds: window,
    trendPercent: trend(samples.filter((s) => s.atSeconds >= warmup)), parts: { anon: medians((s) => s.anonKiB), file: medians((s) => s.fileKiB) } };
}

export async function run(opts: SoakOptions = {}): Promise<SoakResult> {
  const seconds = opts.seconds ?? 600;
  const warmup = Math.min(opts.warmupSeconds ?? 60, Math.floor(seconds / 2));
  const keys = opts.keys ?? 10_000;
  const dataDir = tempDir("tollgate-bench-soak-");
  const data = seedSoak(dataDir, keys);
  const mix = buildMix(data);
  const server = await startTollgate({ TOLLGATE_DATA_DIR: dataDir });
  const forgetSignals = stopOnSignal([server.stop]);
  try {
    const lua = mixLua(mix, data.rootKey);
    await wrk(server.url, lua, { seconds: 3 });
    const capacity = await wrk(server.url, lua, { seconds: opts.capacitySeconds ?? 10 });
    const rate = opts.rate ?? Math.max(1, Math.round(capacity.requestsPerSec / 2));
    const cpuBefore = cpuMs(server.pid);
    const sampler = sampleRss(server.pid, opts.sampleSeconds ?? 10);
    const load = await constantRate(server.url, data.rootKey, mix, { rate, seconds }).finally(() => sampler.stop());
    const serverCpuUsPerRequest = ((cpuMs(server.pid) - cpuBefore) * 1000) / load.sent;
    const memory = rssGrowth(sampler.samples, warmup, seconds);
    const errors = errorsOf(load);
    const partial = { capacity, rate, load, errors, samples: sampler.samples, ...memory, serverCpuUsPerRequest };
    const passed = errors === 0 && memory.growthPercent < 5;
    return { ...partial, passed, markdown: report(partial, keys, warmup, passed) };
  } finally {
    forgetSignals();
    await server.stop();
    // Ten minutes of events make a database of hundreds of MB: no run leaves one behind.
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const result = await run({ seconds: Number(process.env.SOAK_SECONDS ?? 600), rate: process.env.SOAK_RATE ? Number(process.env.SOAK_RATE) : undefined });
  console.log(result.markdown);
  if (!result.passed) process.exitCode = 1;
}
