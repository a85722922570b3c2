/**
 * keys.verifyKey under load: N keys in the store (100,000 by default; BENCH_KEYS takes a list for
 * the cost curve, e.g. "1000,100000,1000000"), each verification on a random known key with one
 * permission query and a credit spend; against the bare Bun.serve echo in the same run with the
 * same load generator (wrk, 50 connections, BENCH_SECONDS each, loopback), in BENCH_ROUNDS
 * alternating rounds. Prints a Markdown table per key count with the median ratios.
 * Target (issue 3): throughput ≥ 0.75 of the echo's, p99 ≤ 1.5 × the echo's.
 */
import { join } from "node:path";
import { compareWithEcho, formatMeasured, MEASURED_HEADER, median, postRandomBodiesLua, startServer, startTollgate, tempDir } from "./lib.ts";
import { seedKeys } from "./seed.ts";

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
    const lua = postRandomBodiesLua("/v2/keys.verifyKey", rootKey, keys.map((key) => JSON.stringify({ key, permissions: "documents.read", credits: { cost: 1 } })));
    const echo = await startServer(["bun", join("bench", "echo.ts")]);
    const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ANALYTICS: opts.analytics ?? "on" });
    try {
      // The warm-up is long enough to touch most keys once (a first verification loads the key from SQLite).
      const r = await compareWithEcho(echo, tollgate, lua, { seconds: opts.seconds, rounds: opts.rounds, warmupSeconds: Math.max(3, Math.ceil(count / 20_000)) });
      const ratio = median(r.server.map((m) => m.requestsPerSec)) / median(r.echo.map((m) => m.requestsPerSec));
      const p99 = median(r.server.map((m) => m.p99Ms)) / median(r.echo.map((m) => m.p99Ms));
      out.push(`### keys.verifyKey, ${count.toLocaleString("en")} keys (permission query + credit spend, analytics ${opts.analytics ?? "on"}, 50 connections, ${opts.rounds} × ${opts.seconds} s)\n`);
      out.push(MEASURED_HEADER);
      r.echo.forEach((m, i) => out.push(formatMeasured(`Bun.serve echo, round ${i + 1}`, m)));
      r.server.forEach((m, i) => out.push(formatMeasured(`tollgate keys.verifyKey, round ${i + 1}`, m)));
      out.push(`\nmedian throughput ratio **${ratio.toFixed(2)}** (target ≥ 0.75); median p99 ratio **${p99.toFixed(2)}** (target ≤ 1.5)\n`);
    } finally {
      await tollgate.stop();
      await echo.stop();
    }
  }
  return out.join("\n");
}

if (import.meta.main) {
  const keyCounts = (process.env.BENCH_KEYS ?? "100000").split(",").map(Number);
  console.log(await run({
    keyCounts, seconds: Number(process.env.BENCH_SECONDS ?? 10), rounds: Number(process.env.BENCH_ROUNDS ?? 3),
    analytics: process.env.BENCH_ANALYTICS === "off" ? "off" : "on",
  }));
}
