/**
 * keys.verifyKey under load: N keys in the store (100,000 by default; BENCH_KEYS takes a list for
 * the cost curve, e.g. "1000,100000,1000000"), each verification on a random known key with one
 * permission query and a credit spend; against the bare Bun.serve echo in the same run with the
 * same load generator (wrk, 50 connections, BENCH_SECONDS each, loopback), in BENCH_ROUNDS
 * alternating rounds. Prints a Markdown table per key count with the median ratios.
 * Before the rounds every key (up to the key cache's size) is verified once, in order, so the rounds
 * measure the steady state of a running service; that first pass, where each verification loads
 * its key from SQLite, is reported on its own line (throughput and server CPU per verification).
 * Target (issue 3): throughput ≥ 0.75 of the echo's, p99 ≤ 1.5 × the echo's.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { compareWithEcho, cpuMs, formatMeasured, MEASURED_HEADER, medianRatio, postRandomBodiesLua, startServer, startTollgate, tempDir, type Child } from "./lib.ts";
import { seedKeys } from "./seed.ts";

/** The body of each verification: a permission query and a credit spend (bench/floor.ts sends the same). */
export const verifyBody = (key: string): string => JSON.stringify({ key, permissions: "documents.read", credits: { cost: 1 } });

export interface VerifyOptions {
  keyCounts: number[];
  seconds: number;
  rounds: number;
  /** TOLLGATE_ANALYTICS for the server (default on, as shipped). */
  analytics?: "on" | "off";
}

export async function run(opts: VerifyOptions): Promise<string> {
  const out: string[] = [];
  for (const count of opts.keyCounts) {
    const dataDir = tempDir("tollgate-bench-verify-");
    const started = performance.now();
    const { rootKey, keys } = seedKeys(dataDir, count, { credits: 1_000_000_000 });
    console.error(`seeded ${keys.length} keys in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const bodies = keys.map(verifyBody);
    const lua = postRandomBodiesLua("/v2/keys.verifyKey", rootKey, bodies);
    const echo = await startServer(["bun", join("bench", "echo.ts")]);
    const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ANALYTICS: opts.analytics ?? "on" });
    try {
      const cold = await firstPass(tollgate, rootKey, bodies.slice(0, KEY_CACHE_SIZE));
      const r = await compareWithEcho(echo, tollgate, lua, { seconds: opts.seconds, rounds: opts.rounds });
      const ratio = medianRatio(r.server, r.echo, (m) => m.requestsPerSec);
      const p99 = medianRatio(r.server, r.echo, (m) => m.p99Ms);
      out.push(`### keys.verifyKey, ${count.toLocaleString("en")} keys (permission query + credit spend, analytics ${opts.analytics ?? "on"}, 50 connections, ${opts.rounds} × ${opts.seconds} s)\n`);
      out.push(MEASURED_HEADER);
      r.echo.forEach((m, i) => out.push(formatMeasured(`Bun.serve echo, round ${i + 1}`, m)));
      r.server.forEach((m, i) => out.push(formatMeasured(`tollgate keys.verifyKey, round ${i + 1}`, m)));
      out.push(`\nfirst verification of each of ${cold.verified.toLocaleString("en")} keys (cold cache; Bun fetch client, ${FIRST_PASS_IN_FLIGHT} in flight): ${Math.round(cold.perSecond)} verifications/s, server CPU ${cold.cpuUsPerRequest.toFixed(1)} µs each`);
      out.push(`\nmedian throughput ratio **${ratio.toFixed(2)}** (target ≥ 0.75); median p99 ratio **${p99.toFixed(2)}** (target ≤ 1.5)\n`);
    } finally {
      await tollgate.stop();
      await echo.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return out.join("\n");
}

/** The key cache's size the server runs with (its default): keys past it cannot all be warm at once. */
const KEY_CACHE_SIZE = loadConfig({}).keyCacheSize;
const FIRST_PASS_IN_FLIGHT = 50;

/** Verifies each body once, in order, FIRST_PASS_IN_FLIGHT at a time; every one must answer 200 and valid. */
async function firstPass(server: Child, rootKey: string, bodies: readonly string[]): Promise<{ verified: number; perSecond: number; cpuUsPerRequest: number }> {
  const headers = { "content-type": "application/json", authorization: `Bearer ${rootKey}` };
  let next = 0;
  const cpu0 = cpuMs(server.pid);
  const started = performance.now();
  await Promise.all(Array.from({ length: FIRST_PASS_IN_FLIGHT }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const response = await fetch(`${server.url}/v2/keys.verifyKey`, { method: "POST", headers, body });
      const json = (await response.json()) as { data?: { valid?: boolean } };
      if (response.status !== 200 || json.data?.valid !== true) throw new Error(`first pass: ${response.status} ${JSON.stringify(json)}`);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  return { verified: bodies.length, perSecond: bodies.length / seconds, cpuUsPerRequest: ((cpuMs(server.pid) - cpu0) * 1000) / bodies.length };
}

if (import.meta.main) {
  const keyCounts = (process.env.BENCH_KEYS ?? "100000").split(",").map(Number);
  console.log(await run({
    keyCounts, seconds: Number(process.env.BENCH_SECONDS ?? 10), rounds: Number(process.env.BENCH_ROUNDS ?? 3),
    analytics: process.env.BENCH_ANALYTICS === "off" ? "off" : "on",
  }));
}
