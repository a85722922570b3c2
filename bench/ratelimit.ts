/**
 * ratelimit.limit: throughput over 100,000 distinct identifiers against the bare Bun.serve echo in
 * the same run (wrk, 50 connections, loopback); resident memory added per live identifier with
 * 1,000,000 identifiers (in-process, through the real service); and accuracy: 3 × limit
 * concurrent requests on one identifier, exactly `limit` succeed, every round.
 */
import { join } from "node:path";
import { buildServices, openDataDir } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { systemClock } from "../src/lib/clock.ts";
import { ALL_GRANTS } from "../src/services/auth/index.ts";
import { formatRow, startServer, startTollgate, TABLE_HEADER, tempDir, wrk } from "./lib.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const MEMORY_IDENTIFIERS = Number(process.env.BENCH_IDENTIFIERS ?? 1_000_000);

function limitLua(rootKey: string): string {
  return `wrk.method = "POST"
wrk.path = "/v2/ratelimits.limit"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${rootKey}"
math.randomseed(7)
request = function()
  local body = '{"namespace":"bench","identifier":"user_' .. math.random(100000) .. '","limit":1000000,"duration":60000}'
  return wrk.format(nil, nil, nil, body)
end
`;
}

async function throughput(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-rl-");
  const rootKey = `tg_bench_${"x".repeat(24)}`;
  const lua = limitLua(rootKey);
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: rootKey });
  try {
    await wrk(echo.url, lua, { seconds: 2 });
    await wrk(tollgate.url, lua, { seconds: 3 });
    const e = await wrk(echo.url, lua, { seconds: SECONDS });
    const t = await wrk(tollgate.url, lua, { seconds: SECONDS });
    console.log(`### ratelimit.limit (100,000 identifiers, 50 connections, ${SECONDS} s)\n`);
    console.log(TABLE_HEADER);
    console.log(formatRow("Bun.serve echo", e));
    console.log(formatRow("tollgate ratelimits.limit", t));
    console.log(`\nthroughput ratio ${(t.requestsPerSec / e.requestsPerSec).toFixed(2)} (target >= 0.8)\n`);
    await accuracy(tollgate.url, rootKey);
  } finally {
    await tollgate.stop();
    await echo.stop();
  }
}

async function accuracy(url: string, rootKey: string): Promise<void> {
  const rounds = 20;
  const limit = 100;
  const exact: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const body = JSON.stringify({ namespace: "accuracy", identifier: `round_${round}`, limit, duration: 600_000 });
    const answers = await Promise.all(Array.from({ length: 3 * limit }, () => fetch(`${url}/v2/ratelimits.limit`, {
      method: "POST", headers: { authorization: `Bearer ${rootKey}`, "content-type": "application/json" }, body,
    }).then((r) => r.json() as Promise<{ data: { success: boolean } }>)));
    exact.push(answers.filter((a) => a.data.success).length);
  }
  const allExact = exact.every((n) => n === limit);
  console.log(`### accuracy: ${3 * limit} concurrent requests, limit ${limit}, ${rounds} rounds\n`);
  console.log(`successes per round: ${[...new Set(exact)].join(", ")} → ${allExact ? "exactly the limit every round" : "NOT exact"}\n`);
}

function rssMiB(): number {
  Bun.gc(true);
  return process.memoryUsage().rss / 1024 / 1024;
}

async function memory(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-rl-mem-");
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const storage = openDataDir(config, silentLogger);
  const services = buildServices(storage, config, systemClock);
  const actor = { type: "cli" as const, id: "bench" };
  services.workspaces.create({ name: "default" }, actor);
  const rootKey = services.workspaces.createRootKey({ workspace: "default", name: "bench", permissions: [...ALL_GRANTS] }, actor).key;
  const principal = services.auth.authenticate(`Bearer ${rootKey}`);
  services.ratelimits.limit(principal, { namespace: "memory", identifier: "warmup", limit: 10, duration: 60_000 });
  const identifiers = Array.from({ length: MEMORY_IDENTIFIERS }, (_, i) => `user_${i}`);
  const before = rssMiB();
  for (const identifier of identifiers) services.ratelimits.limit(principal, { namespace: "memory", identifier, limit: 10, duration: 60_000 });
  await Bun.sleep(2000);
  const after = rssMiB();
  const perIdentifier = ((after - before) * 1024 * 1024) / MEMORY_IDENTIFIERS;
  console.log(`### memory: ${MEMORY_IDENTIFIERS.toLocaleString("en")} live identifiers\n`);
  console.log(`resident memory ${before.toFixed(0)} MiB → ${after.toFixed(0)} MiB: ${perIdentifier.toFixed(0)} bytes per identifier (target < 250; identifiers like "user_123456", held strings excluded)\n`);
  storage.close();
}

await throughput();
await memory();
