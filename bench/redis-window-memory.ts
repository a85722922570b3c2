/**
 * What a rate-limit window costs Redis on a cluster node's limiter, against what the caps charge it
 * (REDIS_WINDOW_FIXED_BYTES plus two bytes a character of its key, redis-window-script.ts), and whether a flood of
 * distinct identifiers stays within the workspace cap in Redis's own memory. A fresh Redis from
 * Debian's package per run, on a free loopback port; the figures go to BENCHMARKS.md.
 *
 *   bun run bench/redis-window-memory.ts [windows=100000]
 */
import { RedisWindowLimiter, redisWindowClient, type LimitRequest } from "../src/services/ratelimit/index.ts";
import { REDIS_WINDOW_FIXED_BYTES } from "../src/services/ratelimit/redis-window-script.ts";
import { startRedis } from "../test/support/servers.ts";
import { TestClock } from "../test/support/test-clock.ts";

const MIB = 1024 * 1024;
const windows = Number(process.argv[2] ?? 100_000);
const IN_FLIGHT = 256;

async function usedMemory(client: ReturnType<typeof redisWindowClient>): Promise<number> {
  const info = await client.send("INFO", ["memory"]) as string;
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

async function fill(limiter: RedisWindowLimiter, count: number, identifier: (i: number) => string): Promise<void> {
  const check = (i: number): LimitRequest => ({ workspace: "ws_bench", scope: "ws_bench|rlns_bench", identifier: identifier(i), limit: 100, durationMs: 60_000, cost: 1 });
  for (let start = 0; start < count; start += IN_FLIGHT) {
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count - start) }, (_, j) => limiter.check(check(start + j))));
  }
}

const redis = await startRedis();
const client = redisWindowClient(redis.url);
try {
  await client.connect();
  for (const [name, identifier] of [["16-char ids", (i: number) => `user_${String(i).padStart(11, "0")}`], ["64-char ids", (i: number) => `${"x".repeat(48)}${String(i).padStart(16, "0")}`]] as const) {
    await client.send("FLUSHALL", []);
    const before = await usedMemory(client);
    const limiter = new RedisWindowLimiter({ client, clock: new TestClock(1_700_000_040_000), keyPrefix: "tollgate:rl:" });
    await fill(limiter, windows, identifier);
    const after = await usedMemory(client);
    const charged = Number(await client.send("GET", ["tollgate:rl:#total"]));
    console.log(`${name}: ${windows} windows, Redis used_memory ${((after - before) / windows).toFixed(0)} B a window, charged ${(charged / windows).toFixed(0)} B (fixed part ${REDIS_WINDOW_FIXED_BYTES})`);
  }
  await client.send("FLUSHALL", []);
  const capMiB = 8;
  const before = await usedMemory(client);
  const capped = new RedisWindowLimiter({ client, clock: new TestClock(1_700_000_040_000), keyPrefix: "tollgate:rl:", caps: { workspaceBytes: capMiB * MIB, totalBytes: 2 * capMiB * MIB } });
  const startedMs = performance.now();
  await fill(capped, windows, (i) => `user_${String(i).padStart(11, "0")}`);
  const elapsedS = (performance.now() - startedMs) / 1000;
  const after = await usedMemory(client);
  console.log(`capped at ${capMiB} MiB a workspace: ${windows} distinct identifiers → Redis grew ${((after - before) / MIB).toFixed(1)} MiB, ${capped.stats().evicted} evicted, ${(windows / elapsedS).toFixed(0)} checks/s (${IN_FLIGHT} in flight)`);
} finally {
  client.close();
  await redis.stop();
}
