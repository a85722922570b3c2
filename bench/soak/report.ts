/**
 * The soak's report in Markdown: the normal traffic (its polite warm-up and the rest, beside the
 * hostile mix) kept apart from the hostile traffic, so that the latencies quoted are the normal
 * callers' own; then the footprint gauges against their caps, and resident memory against its bound.
 */
import { formatRow, TABLE_HEADER, type WrkResult } from "../lib.ts";
import { Histogram, type ConstantRateResult, type OperationStats } from "./constant-rate.ts";
import type { HostileResult } from "./hostile.ts";
import type { Footprint, MemoryWindows, RssSample } from "./memory.ts";

export interface SoakCaps {
  ratelimitMiB: number;
  ratelimitWorkspaceMiB: number;
  keyCacheMiB: number;
  bodyBufferMiB: number;
}

export interface SoakResult {
  capacity: WrkResult;
  /** Requests per second of the normal traffic. */
  rate: number;
  keys: number;
  warmup: number;
  caps: SoakCaps;
  /** The normal traffic during the warm-up, and after it (beside the hostile mix, when there is one). */
  polite: ConstantRateResult;
  normal: ConstantRateResult;
  hostile: HostileResult | undefined;
  samples: RssSample[];
  memory: MemoryWindows;
  /** Non-2xx answers and socket errors of the normal traffic, both phases. */
  normalErrors: number;
  rssBoundKiB: number;
  serverCpuUsPerRequest: number;
  /** The gates that failed; none when the run passed. */
  failures: string[];
  markdown: string;
}

const mib = (kib: number) => (kib / 1024).toFixed(1);
const bytesMib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const change = ([from, to]: [number, number]) => `${mib(from)} → ${mib(to)} MiB (${to >= from ? "+" : ""}${mib(to - from)} MiB)`;
const ms = (h: Histogram, q: number) => h.quantile(q).toFixed(2);

function operationsTable(byOperation: Map<string, OperationStats>): string[] {
  const rows = ["| operation | sent | p50 ms | p99 ms | statuses | socket errors | denials |", "| --- | --- | --- | --- | --- | --- | --- |"];
  for (const [name, s] of byOperation) {
    const statuses = [...s.statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(", ");
    rows.push(`| ${name} | ${s.sent} | ${ms(s.latency, 0.5)} | ${ms(s.latency, 0.99)} | ${statuses} | ${s.socketErrors} | ${s.denials} |`);
  }
  return rows;
}

function merged(byOperation: Map<string, OperationStats>): Histogram {
  const all = new Histogram();
  for (const s of byOperation.values()) all.merge(s.latency);
  return all;
}

function normalPhase(title: string, load: ConstantRateResult): string[] {
  const all = merged(load.byOperation);
  return [
    `${title}: ${load.sent} requests in ${load.seconds} s, ${load.lateSends} sent more than 10 ms late; ` +
      `**p50 ${ms(all, 0.5)} ms, p99 ${ms(all, 0.99)} ms** (from the actual send: p50 ${ms(load.fromSend, 0.5)} ms, p99 ${ms(load.fromSend, 0.99)} ms).`,
    "",
    ...operationsTable(load.byOperation),
    "",
  ];
}

function hostileSection(h: HostileResult): string[] {
  return [
    `Hostile traffic (least-privilege root keys of two other workspaces), ${h.sent} requests in ${h.seconds} s at a constant rate ` +
      `(${h.lateSends} sent more than 10 ms late) plus the runaway queries: **${h.errors} 5xx or socket errors, ${h.unexpected} unexpected answers**. ` +
      "Latencies here are the hostile callers' own:",
    "",
    ...operationsTable(h.byOperation),
    "",
  ];
}

function footprintSection(r: Omit<SoakResult, "markdown">): string[] {
  const atWarmup = r.samples.find((s) => s.atSeconds >= r.warmup)?.footprint;
  const end = r.samples[r.samples.length - 1]!.footprint;
  const show = (f: Footprint | undefined, name: keyof Footprint) => (f ? f[name].toLocaleString("en") : "–");
  const cap: Partial<Record<keyof Footprint, string>> = {
    tollgate_ratelimit_window_bytes: `${r.caps.ratelimitMiB} MiB in all, ${r.caps.ratelimitWorkspaceMiB} MiB a workspace`,
    tollgate_key_cache_bytes: `${((7 / 8) * r.caps.keyCacheMiB).toFixed(1)} MiB (7/8 of ${r.caps.keyCacheMiB})`,
  };
  return [
    "Footprint from /metrics, at the end of the warm-up and at the end:",
    "",
    "| metric | after the warm-up | at the end | cap |",
    "| --- | --- | --- | --- |",
    ...(Object.keys(end ?? atWarmup ?? {}) as Array<keyof Footprint>).map((name) => `| ${name} | ${show(atWarmup, name)} | ${show(end, name)} | ${cap[name] ?? ""} |`),
    "",
  ];
}

function memorySection(r: Omit<SoakResult, "markdown">, factor: number): string[] {
  const m = r.memory;
  const last = r.samples[r.samples.length - 1]!;
  const baseline = r.hostile ? `second half of the polite warm-up (${r.warmup} s)` : `${m.windowSeconds} s after the warm-up (${r.warmup} s)`;
  const lines = [
    `Server resident memory (VmRSS), median of the samples in the ${baseline} and in the last ${m.windowSeconds} s: ` +
      `${mib(m.rssAfterWarmupKiB)} MiB → **${mib(m.rssAtEndKiB)} MiB**, ${m.growthPercent >= 0 ? "+" : ""}${m.growthPercent.toFixed(1)}%` +
      `${r.hostile ? "" : " (target < 5%)"}; peak after the warm-up ${mib(m.peakKiB)} MiB; least-squares trend after the warm-up ` +
      `${m.trendPercent >= 0 ? "+" : ""}${m.trendPercent.toFixed(1)}%. Its parts, same medians: anonymous ${change(m.parts.anon)}, file-backed ${change(m.parts.file)}.`,
  ];
  if (r.hostile) {
    const added = m.rssAtEndKiB - m.rssAfterWarmupKiB;
    lines.push(
      "",
      `Bound: ${mib(m.rssAfterWarmupKiB)} + ${factor} × (${r.caps.ratelimitMiB} + ${r.caps.keyCacheMiB}) + ${r.caps.bodyBufferMiB} = **${mib(r.rssBoundKiB)} MiB**; ` +
        `the hostile mix added ${mib(added)} MiB, ${(added / 1024 / (r.caps.ratelimitMiB + r.caps.keyCacheMiB)).toFixed(2)} × the two caps ` +
        `(peak ${((m.peakKiB - m.rssAfterWarmupKiB) / 1024 / (r.caps.ratelimitMiB + r.caps.keyCacheMiB)).toFixed(2)} ×).`,
    );
  }
  lines.push(
    "",
    `Analytics query processes (children of the server; reported, not gated): ${last.children} at the end holding ${mib(last.childrenKiB)} MiB, peak ${mib(m.childrenPeakKiB)} MiB.`,
    "",
    "| s | VmRSS MiB | anonymous MiB | file MiB | children MiB (n) | window MiB | key cache MiB |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...r.samples.map((s) => `| ${s.atSeconds} | ${mib(s.rssKiB)} | ${mib(s.anonKiB)} | ${mib(s.fileKiB)} | ${mib(s.childrenKiB)} (${s.children}) | ` +
      `${s.footprint ? bytesMib(s.footprint.tollgate_ratelimit_window_bytes) : "–"} | ${s.footprint ? bytesMib(s.footprint.tollgate_key_cache_bytes) : "–"} |`),
    "",
  );
  return lines;
}

export function report(r: Omit<SoakResult, "markdown">, factor: number): string {
  const after = r.hostile ? `after the warm-up, beside the hostile mix (${r.warmup}–${r.warmup + r.normal.seconds} s)` : `after the warm-up (${r.warmup}–${r.warmup + r.normal.seconds} s)`;
  return [
    `### soak: ${r.polite.seconds + r.normal.seconds} s of the normal mix at ${r.rate} requests/s (${r.keys.toLocaleString("en")} keys, analytics on)` +
      (r.hostile ? `, a hostile mix at ${Math.round(r.hostile.sent / r.hostile.seconds)} requests/s after the first ${r.warmup} s` : ""),
    "",
    `Caps: rate-limit windows ${r.caps.ratelimitMiB} MiB (${r.caps.ratelimitWorkspaceMiB} a workspace), key cache ${r.caps.keyCacheMiB} MiB, request bodies ${r.caps.bodyBufferMiB} MiB.`,
    "",
    "Capacity for the normal mix (wrk, 50 connections, 10 s):",
    "",
    TABLE_HEADER,
    formatRow("tollgate, mixed workload", r.capacity),
    "",
    `Normal traffic at a constant ${r.rate} requests/s (open loop, latency counted from each request's scheduled moment): **${r.normalErrors} errors** ` +
      `(non-2xx or socket errors); CPU per request (both mixes): server ${r.serverCpuUsPerRequest.toFixed(1)} µs, ` +
      `client process ${r.polite.clientCpuUsPerRequest.toFixed(1)} µs a normal request in the warm-up, ${r.normal.clientCpuUsPerRequest.toFixed(1)} µs after it (the hostile client shares the process).`,
    "",
    ...normalPhase(`Normal traffic, polite warm-up (0–${r.warmup} s)`, r.polite),
    ...normalPhase(`Normal traffic ${after}`, r.normal),
    ...(r.hostile ? hostileSection(r.hostile) : []),
    ...(r.hostile ? footprintSection(r) : []),
    ...memorySection(r, factor),
    r.failures.length === 0 ? "**Passed.**" : `**Failed:** ${r.failures.join("; ")}.`,
    "",
  ].join("\n");
}
