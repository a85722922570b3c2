/**
 * The floor of the hot paths on this stack and machine: bench/floor-server.ts, which does only what
 * any verification or rate-limit check over HTTP must do (read the header and the JSON body, hash
 * and look up the key or count the identifier, answer with a request id), against the bare
 * Bun.serve echo, with the same load as bench/verify.ts (1,000 and 100,000 keys, a permission query
 * and a credit spend in each body) and bench/ratelimit.ts (100,000 identifiers), in alternating
 * rounds (wrk, 50 connections). tollgate does all of this and more, so its ratios to the echo can
 * at best reach the floor's: the floor shows how much of a target is left for tollgate's own work.
 */
import { join } from "node:path";
import { randomKeyPart } from "../src/lib/ids.ts";
import { compareWithEcho, formatMeasured, MEASURED_HEADER, medianRatio, postRandomBodiesLua, ratelimitLua, startServer, type Child } from "./lib.ts";
import { verifyBody } from "./verify.ts";

interface Workload {
  title: string;
  lua: string;
}

function verifyWorkload(keyCount: number): Workload {
  const bodies = Array.from({ length: keyCount }, () => verifyBody(`tg_${randomKeyPart(24)}`));
  return { title: `keys.verifyKey, ${keyCount.toLocaleString("en")} keys`, lua: postRandomBodiesLua("/v2/keys.verifyKey", "tg_floor_root_key", bodies) };
}

export async function run(opts: { seconds: number; rounds: number }): Promise<string> {
  const workloads = [verifyWorkload(1_000), verifyWorkload(100_000), { title: "ratelimits.limit, 100,000 identifiers", lua: ratelimitLua("tg_floor_root_key") }];
  const out: string[] = [];
  for (const w of workloads) {
    // Fresh servers per workload, so that one's map does not weigh on the next.
    const echo: Child = await startServer(["bun", join("bench", "echo.ts")]);
    const floor: Child = await startServer(["bun", join("bench", "floor-server.ts")]);
    try {
      const r = await compareWithEcho(echo, floor, w.lua, { seconds: opts.seconds, rounds: opts.rounds });
      out.push(`### the floor: ${w.title} (50 connections, ${opts.rounds} × ${opts.seconds} s)\n`);
      out.push(MEASURED_HEADER);
      r.echo.forEach((m, i) => out.push(formatMeasured(`Bun.serve echo, round ${i + 1}`, m)));
      r.server.forEach((m, i) => out.push(formatMeasured(`floor, round ${i + 1}`, m)));
      const perRound = r.server.map((m, i) => (m.requestsPerSec / r.echo[i]!.requestsPerSec).toFixed(2)).join(", ");
      out.push(`\nmedian throughput ratio **${medianRatio(r.server, r.echo, (m) => m.requestsPerSec).toFixed(2)}** (per round ${perRound}); median p99 ratio **${medianRatio(r.server, r.echo, (m) => m.p99Ms).toFixed(2)}**\n`);
    } finally {
      await floor.stop();
      await echo.stop();
    }
  }
  return out.join("\n");
}

if (import.meta.main) {
  console.log(await run({ seconds: Number(process.env.BENCH_SECONDS ?? 10), rounds: Number(process.env.BENCH_ROUNDS ?? 3) }));
}
