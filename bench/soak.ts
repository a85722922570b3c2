/**
 * The soak: tollgate under a mixed workload (bench/soak/mix.ts) for SOAK_SECONDS (default 600) at
 * half its measured capacity, at a constant rate, with a hostile mix beside it. First wrk measures
 * the capacity for the normal mix (10 s, 50 connections, after a warm-up); then a constant-rate
 * client (bench/soak/constant-rate.ts) sends the normal mix at half of it for the whole soak. The
 * first minute (the warm-up; half of a shorter run) is polite; from then on the hostile client
 * (bench/soak/hostile.ts) sends SOAK_HOSTILE_RATE requests/s (default 200; 0 turns it off) with
 * least-privilege root keys of two other workspaces: unique long rate-limit identifiers, unknown
 * keys, ad-hoc 30-day limits, ~1 MB metas, runaway analytics queries. Resident memory of the server
 * and of its children, and the footprint gauges of /metrics, are sampled every 5 s.
 *
 * The server runs with small caps, so that the hostile mix reaches them within the run: rate-limit
 * windows 32 MiB in all and 16 per workspace, key cache 32 MiB, request bodies 10 MiB (each yields
 * to a TOLLGATE_* variable of the same name set in the soak's environment).
 *
 * Pass, with the hostile mix:
 * - the normal traffic: zero errors (any non-2xx, any socket error);
 * - the hostile traffic: no 5xx, no socket error, no status it should not get;
 * - the caps reached (so the run exercises what it gates): at the end, live window bytes at least
 *   90% of TOLLGATE_RATELIMIT_MEMORY_MB, the key cache's bytes at least 90% of its snapshot budget
 *   (7/8 of TOLLGATE_KEY_CACHE_MB), and some windows evicted;
 * - the server's resident memory at the end (median of the last minute's samples; the children,
 *   which are killed and replaced with every runaway query, are reported, not gated) at most
 *     RSS of the polite warm-up (median of its second half)
 *       + RSS_FACTOR × (TOLLGATE_RATELIMIT_MEMORY_MB + TOLLGATE_KEY_CACHE_MB) + TOLLGATE_BODY_BUFFER_MIB.
 *   Both caps count estimated bytes at their worst case (2 bytes a character, every column counted
 *   twice for its doubling); the factor adds what that count leaves out: the garbage of the churn
 *   (every evicted window's and snapshot's strings), heap fragmentation and the allocator's slack,
 *   which made resident memory grow well past the bytes the caps count (BENCHMARKS.md has the
 *   measured ratio it is chosen from). Request bodies are held as bytes and freed with their request,
 *   so their budget counts once.
 * Without the hostile mix (SOAK_HOSTILE_RATE=0) the memory gate is the polite one: resident memory in
 * the last minute less than 5% above the minute after the warm-up; with it, that growth is what the
 * run is for, and is reported, not gated. Exits 1 when a gate fails.
 * SOAK_RATE sets the normal rate instead (requests/s), for a machine whose capacity swings with other work.
 */
import { rmSync } from "node:fs";
import { cpuMs, startTollgate, stopOnSignal, tempDir, wrk } from "./lib.ts";
import { constantRate } from "./soak/constant-rate.ts";
import { hostileClient } from "./soak/hostile.ts";
import { seedHostile } from "./soak/hostile-seed.ts";
import { memoryWindows, sampleServer } from "./soak/memory.ts";
import { buildMix, mixLua } from "./soak/mix.ts";
import { report, type SoakCaps, type SoakResult } from "./soak/report.ts";
import { seedSoak } from "./soak/seed.ts";

export interface SoakOptions {
  seconds?: number;
  warmupSeconds?: number;
  keys?: number;
  capacitySeconds?: number;
  sampleSeconds?: number;
  /** Requests per second instead of half the measured capacity. */
  rate?: number;
  /** Requests per second of the hostile mix after the warm-up; 0 for none. */
  hostileRate?: number;
}

/** Resident memory the server may add to its polite warm-up, per MiB of the two caps (see the header). */
export const RSS_FACTOR = 2.5;
/** How near its cap a footprint must be at the end for the run to count as having reached it. */
const CAP_REACHED_SHARE = 0.9;
const MIB = 1024 * 1024;

/** The caps the server runs with: the soak's small ones, or the TOLLGATE_* variables of its environment. */
function soakCaps(env: Record<string, string | undefined>): SoakCaps {
  const mib = (name: string, fallback: number) => Number(env[name] || fallback);
  return {
    ratelimitMiB: mib("TOLLGATE_RATELIMIT_MEMORY_MB", 32), ratelimitWorkspaceMiB: mib("TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB", 16),
    keyCacheMiB: mib("TOLLGATE_KEY_CACHE_MB", 32), bodyBufferMiB: mib("TOLLGATE_BODY_BUFFER_MIB", 10),
  };
}

const capsEnv = (caps: SoakCaps): Record<string, string> => ({
  TOLLGATE_RATELIMIT_MEMORY_MB: String(caps.ratelimitMiB), TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB: String(caps.ratelimitWorkspaceMiB),
  TOLLGATE_KEY_CACHE_MB: String(caps.keyCacheMiB), TOLLGATE_BODY_BUFFER_MIB: String(caps.bodyBufferMiB),
});

/** The gates of a run (see the header); each failure named. */
function gates(r: Omit<SoakResult, "failures" | "markdown">): string[] {
  const failures: string[] = [];
  if (r.normalErrors > 0) failures.push(`${r.normalErrors} errors in the normal traffic`);
  if (!r.hostile) {
    if (!(r.memory.growthPercent < 5)) failures.push(`resident memory grew ${r.memory.growthPercent.toFixed(1)}% after the warm-up (target < 5%)`);
    return failures;
  }
  if (r.hostile.errors > 0) failures.push(`${r.hostile.errors} 5xx answers or socket errors in the hostile traffic`);
  if (r.hostile.unexpected > 0) failures.push(`${r.hostile.unexpected} unexpected answers in the hostile traffic`);
  const end = r.samples[r.samples.length - 1]!.footprint;
  if (!end) failures.push("no /metrics at the end");
  else {
    if (!(end.tollgate_ratelimit_window_bytes >= CAP_REACHED_SHARE * r.caps.ratelimitMiB * MIB)) failures.push("live window bytes did not reach the rate-limit cap");
    if (!(end.tollgate_key_cache_bytes >= CAP_REACHED_SHARE * (7 / 8) * r.caps.keyCacheMiB * MIB)) failures.push("the key cache did not reach its cap");
    if (!(end.tollgate_ratelimit_windows_evicted_total > 0)) failures.push("no window was evicted");
  }
  if (!(r.memory.rssAtEndKiB <= r.rssBoundKiB)) failures.push("resident memory at the end is over the bound");
  return failures;
}

export async function run(opts: SoakOptions = {}): Promise<SoakResult> {
  const seconds = opts.seconds ?? 600;
  const warmup = Math.min(opts.warmupSeconds ?? 60, Math.floor(seconds / 2));
  const keys = opts.keys ?? 10_000;
  const hostileRate = opts.hostileRate ?? 200;
  const caps = soakCaps(process.env);
  const dataDir = tempDir("tollgate-bench-soak-");
  const data = seedSoak(dataDir, keys);
  const hostileData = hostileRate > 0 ? await seedHostile(dataDir) : undefined;
  const mix = buildMix(data);
  const server = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, ...capsEnv(caps) });
  const forgetSignals = stopOnSignal([server.stop]);
  try {
    const lua = mixLua(mix, data.rootKey);
    await wrk(server.url, lua, { seconds: 3 });
    const capacity = await wrk(server.url, lua, { seconds: opts.capacitySeconds ?? 10 });
    const rate = opts.rate ?? Math.max(1, Math.round(capacity.requestsPerSec / 2));
    const cpuBefore = cpuMs(server.pid);
    const sampler = sampleServer(server.pid, server.url, opts.sampleSeconds ?? 5);
    const polite = await constantRate(server.url, data.rootKey, mix, { rate, seconds: warmup });
    const [normal, hostile] = await Promise.all([
      constantRate(server.url, data.rootKey, mix, { rate, seconds: seconds - warmup }),
      hostileData ? hostileClient(server.url, hostileData, { rate: hostileRate, seconds: seconds - warmup }) : undefined,
    ]).finally(() => sampler.stop());
    const sent = polite.sent + normal.sent + (hostile?.sent ?? 0);
    const memory = memoryWindows(sampler.samples, warmup, seconds, hostile !== undefined);
    const partial = {
      capacity, rate, keys, warmup, caps, polite, normal, hostile, samples: sampler.samples, memory,
      normalErrors: errorsOf(polite) + errorsOf(normal),
      rssBoundKiB: memory.rssAfterWarmupKiB + (RSS_FACTOR * (caps.ratelimitMiB + caps.keyCacheMiB) + caps.bodyBufferMiB) * 1024,
      serverCpuUsPerRequest: ((cpuMs(server.pid) - cpuBefore) * 1000) / sent,
    };
    const failures = gates(partial);
    return { ...partial, failures, markdown: report({ ...partial, failures }, RSS_FACTOR) };
  } finally {
    forgetSignals();
    await server.stop();
    // Ten minutes of events make a database of hundreds of MB: no run leaves one behind.
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function errorsOf(load: { byOperation: Map<string, { socketErrors: number; statuses: Map<number, number> }> }): number {
  let errors = 0;
  for (const stats of load.byOperation.values()) {
    errors += stats.socketErrors;
    for (const [status, n] of stats.statuses) if (status < 200 || status > 299) errors += n;
  }
  return errors;
}

if (import.meta.main) {
  const env = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);
  const result = await run({ seconds: env("SOAK_SECONDS") ?? 600, rate: env("SOAK_RATE"), hostileRate: env("SOAK_HOSTILE_RATE") });
  console.log(result.markdown);
  if (result.failures.length > 0) process.exitCode = 1;
}
