/**
 * keys.createKey under load: each request creates a key with two permissions, credits and an
 * external id (so it links an identity), committed to SQLite before the answer; against the bare
 * Bun.serve echo in the same run (wrk, 50 connections, BENCH_SECONDS, BENCH_ROUNDS alternating rounds).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { compareWithEcho, formatMeasured, MEASURED_HEADER, medianRatio, postRandomBodiesLua, startServer, startTollgate, tempDir } from "./lib.ts";
import { seedKeys } from "./seed.ts";

export async function run(opts: { seconds: number; rounds: number }): Promise<string> {
  const dataDir = tempDir("tollgate-bench-create-");
  // A store that already holds keys, as a real one does.
  const { rootKey, apiId } = seedKeys(dataDir, 10_000);
  const bodies = Array.from({ length: 1_000 }, (_, i) => JSON.stringify({
    apiId, prefix: "bc", name: `bench key ${i}`, externalId: `customer_${i % 200}`,
    permissions: ["documents.read", `documents.${i % 7}`], credits: { remaining: 1_000 }, meta: { plan: "pro", seat: i },
  }));
  const lua = postRandomBodiesLua("/v2/keys.createKey", rootKey, bodies);
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir });
  try {
    const r = await compareWithEcho(echo, tollgate, lua, opts);
    const ratio = medianRatio(r.server, r.echo, (m) => m.requestsPerSec);
    return [
      `### keys.createKey (two permissions, credits, an identity; 10,000 keys already stored; 50 connections, ${opts.rounds} × ${opts.seconds} s)\n`,
      MEASURED_HEADER,
      ...r.echo.map((m, i) => formatMeasured(`Bun.serve echo, round ${i + 1}`, m)),
      ...r.server.map((m, i) => formatMeasured(`tollgate keys.createKey, round ${i + 1}`, m)),
      `\nmedian throughput ratio **${ratio.toFixed(2)}** (no target: every request is a committed write)\n`,
    ].join("\n");
  } finally {
    await tollgate.stop();
    await echo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  console.log(await run({ seconds: Number(process.env.BENCH_SECONDS ?? 10), rounds: Number(process.env.BENCH_ROUNDS ?? 3) }));
}
