/**
 * The Redis window store: the shared window contract against a real Redis (a fresh key prefix per
 * limiter), then what only a shared store has to show: exact decisions under concurrent checks from
 * several nodes, state seen by every node, keys that expire, one round trip a check, and a bounded
 * rejection when Redis is away.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import {
  RedisWindowLimiter, WindowStoreUnavailable, redisWindowClient, type LimitRequest,
} from "../../../src/services/ratelimit/index.ts";
import { startRedis, type TestServer } from "../../support/servers.ts";
import { TestClock } from "../../support/test-clock.ts";
import { missing, requireTool, skipWithout } from "../../support/tools.ts";
import { MINUTE, T0, req, windowContract } from "./window-contract.ts";

const freshPrefix = () => `test:${crypto.randomUUID()}:`;

/** The window counters under `prefix`: a workspace's index and byte count (`…}#i`, `…}#b`) and the totals (`#…`) are not windows. */
async function countersUnder(client: RedisClient, prefix: string): Promise<string[]> {
  const keys = await client.send("KEYS", [`${prefix}*`]) as string[];
  return keys.filter((key) => /^\d+\{[^}]*\}:/.test(key.slice(prefix.length)));
}

/** Every key SCAN MATCH `pattern` finds. */
async function scan(client: RedisClient, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await client.send("SCAN", [cursor, "MATCH", pattern, "COUNT", "1000"]) as [string, string[]];
    found.push(...keys);
    cursor = next;
  } while (cursor !== "0");
  return found.sort();
}

/** Runs `fn` with `count` clients of their own, closed afterwards. */
async function withClients<T>(url: string, count: number, fn: (clients: RedisClient[]) => Promise<T>): Promise<T> {
  const clients = Array.from({ length: count }, () => new RedisClient(url));
  try {
    await Promise.all(clients.map((c) => c.connect()));
    return await fn(clients);
  } finally {
    for (const c of clients) c.close();
  }
}

/** Whether `check` rejected with WindowStoreUnavailable, and after how many ms. */
async function rejection(check: Promise<unknown>): Promise<{ unavailable: boolean; afterMs: number }> {
  const startedMs = performance.now();
  try {
    await check;
    return { unavailable: false, afterMs: performance.now() - startedMs };
  } catch (error) {
    return { unavailable: error instanceof WindowStoreUnavailable, afterMs: performance.now() - startedMs };
  }
}

/** Slack for timers on a busy machine: a bound that is met is met by far less. */
const TIMER_SLACK_MS = 1_000;

describe.skipIf(skipWithout(missing.redis(), "the Redis window store"))("RedisWindowLimiter", () => {
  let redis: TestServer;
  let client: RedisClient;

  beforeAll(async () => {
    requireTool(missing.redis());
    redis = await startRedis();
    client = redisWindowClient(redis.url);
    await client.connect();
  });

  afterAll(async () => {
    client?.close();
    await redis?.stop();
  });

  windowContract("RedisWindowLimiter", (startMs) => {
    const clock = new TestClock(startMs);
    const keyPrefix = freshPrefix();
    const limiter = new RedisWindowLimiter({ client, clock, keyPrefix });
    return { clock, limiter, windows: async () => (await countersUnder(client, keyPrefix)).length };
  });

  describe("several nodes on one Redis", () => {
    test("300 concurrent checks of limit 100 over three nodes: exactly 100 pass, each with its own remaining", async () => {
      await withClients(redis.url, 3, async (clients) => {
        const clock = new TestClock(T0);
        const keyPrefix = freshPrefix();
        const nodes = clients.map((c) => new RedisWindowLimiter({ client: c, clock, keyPrefix }));
        const results = await Promise.all(Array.from({ length: 300 }, (_, i) => nodes[i % 3]!.check(req("hot", 100))));
        const passed = results.filter((r) => r.success);
        expect(passed).toHaveLength(100);
        expect(passed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
        expect((await nodes[0]!.check(req("hot", 100, 0))).remaining).toBe(0);
      });
    });

    test("300 concurrent batches over three nodes: a batch charges all its costs or none", async () => {
      await withClients(redis.url, 3, async (clients) => {
        const clock = new TestClock(T0);
        const keyPrefix = freshPrefix();
        const nodes = clients.map((c) => new RedisWindowLimiter({ client: c, clock, keyPrefix }));
        // The wide limit would pass 100 alone: every failed batch beyond the narrow one's 50 tests the rollback.
        const batch: LimitRequest[] = [req("wide", 100), req("narrow", 50)];
        const results = await Promise.all(Array.from({ length: 300 }, (_, i) => nodes[i % 3]!.checkAll(batch)));
        expect(results.filter((r) => r.success)).toHaveLength(50);
        const after = await nodes[1]!.checkAll([req("wide", 100, 0), req("narrow", 50, 0)]);
        expect(after.results.map((r) => r.remaining)).toEqual([50, 0]);
      });
    });

    test("a node sees the counts another node charged", async () => {
      await withClients(redis.url, 2, async ([a, b]) => {
        const clock = new TestClock(T0);
        const keyPrefix = freshPrefix();
        const nodeA = new RedisWindowLimiter({ client: a!, clock, keyPrefix });
        const nodeB = new RedisWindowLimiter({ client: b!, clock, keyPrefix });
        expect((await nodeA.check(req("shared", 10, 7))).remaining).toBe(3);
        expect((await nodeB.check(req("shared", 10, 4))).success).toBe(false);
        expect(await nodeB.check(req("shared", 10, 3))).toMatchObject({ success: true, remaining: 0 });
        expect((await nodeA.check(req("shared", 10, 1))).success).toBe(false);
      });
    });
  });

  describe("keys", () => {
    test("a charged window's key expires two durations after its window started, as the in-memory prune drops it", async () => {
      const clock = new TestClock(T0 + 15_000);
      const keyPrefix = freshPrefix();
      const limiter = new RedisWindowLimiter({ client, clock, keyPrefix });
      await limiter.check(req("a", 10));
      const [key] = await countersUnder(client, keyPrefix);
      const ttlMs = await client.send("PTTL", [key!]) as number;
      // T0 + 2 minutes − (T0 + 15 s), less the real time since the check.
      expect(ttlMs).toBeLessThanOrEqual(2 * MINUTE - 15_000);
      expect(ttlMs).toBeGreaterThan(2 * MINUTE - 15_000 - TIMER_SLACK_MS);
    });

    test("a workspace's window keys are found by its pattern, and no other workspace's", async () => {
      const clock = new TestClock(T0);
      const keyPrefix = freshPrefix();
      const limiter = new RedisWindowLimiter({ client, clock, keyPrefix });
      const inWorkspace = (workspace: string, identifier: string, scope: string): LimitRequest => ({ ...req(identifier, 10), workspace, scope });
      await limiter.checkAll([inWorkspace("ws_1", "u", "ws_1|ns"), inWorkspace("ws_1", "v:w", "ws_1|other")]);
      await limiter.checkAll([inWorkspace("ws_10", "u", "ws_10|ns"), inWorkspace("ws_*", "u", "ws_*|ns")]);
      expect(await countersUnder(client, keyPrefix)).toHaveLength(4);
      const found = await scan(client, limiter.keyPatternOf("ws_1"));
      expect(found).toHaveLength(2);
      expect(found.every((k) => k.includes("{ws_1}"))).toBe(true);
      expect(await scan(client, limiter.keyPatternOf("ws_*"))).toHaveLength(1);
    });

    test("one EVALSHA a check or batch; the script is loaded once per limiter", async () => {
      const clock = new TestClock(T0);
      const limiter = new RedisWindowLimiter({ client, clock, keyPrefix: freshPrefix() });
      await client.send("CONFIG", ["RESETSTAT"]);
      for (let i = 0; i < 5; i++) await limiter.check(req("a", 100));
      for (let i = 0; i < 5; i++) await limiter.checkAll([req("a", 100), req("b", 100, 1, 1_000)]);
      const stats = await client.send("INFO", ["commandstats"]) as string;
      const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      expect({ evalsha: calls("evalsha"), eval: calls("eval"), scriptLoad: calls("script\\|load") }).toEqual({ evalsha: 10, eval: 0, scriptLoad: 1 });
    });

    test("after Redis forgot the script, a check still answers and loads it again", async () => {
      const clock = new TestClock(T0);
      const limiter = new RedisWindowLimiter({ client, clock, keyPrefix: freshPrefix() });
      expect((await limiter.check(req("a", 10))).remaining).toBe(9);
      await client.send("SCRIPT", ["FLUSH"]);
      expect((await limiter.check(req("a", 10))).remaining).toBe(8);
      expect((await limiter.check(req("a", 10))).remaining).toBe(7);
    });
  });

  describe("Redis unreachable", () => {
    test("after the server stopped, a check rejects with WindowStoreUnavailable within the timeout, at once without the offline queue", async () => {
      const timeoutMs = 300;
      // The limiter's client (no offline queue) and Bun's defaults (reconnecting, queueing commands meanwhile).
      const clients = [{ make: (url: string) => redisWindowClient(url, timeoutMs), boundMs: timeoutMs }, { make: (url: string) => new RedisClient(url), boundMs: timeoutMs + TIMER_SLACK_MS }];
      for (const { make, boundMs } of clients) {
        const own = await startRedis();
        const ownClient = make(own.url);
        try {
          await ownClient.connect();
          const limiter = new RedisWindowLimiter({ client: ownClient, clock: new TestClock(T0), keyPrefix: freshPrefix(), timeoutMs });
          expect((await limiter.check(req("a", 10))).success).toBe(true);
          await own.stop();
          for (const outcome of [await rejection(limiter.check(req("a", 10))), await rejection(limiter.checkAll([req("a", 10), req("b", 10)]))]) {
            expect(outcome.unavailable).toBe(true);
            expect(outcome.afterMs).toBeLessThan(boundMs);
          }
        } finally {
          ownClient.close();
          await own.stop();
        }
      }
    });

    test("a check Redis fails (a key of another type where a window belongs) rejects with WindowStoreUnavailable and Redis's error", async () => {
      const keyPrefix = freshPrefix();
      const limiter = new RedisWindowLimiter({ client, clock: new TestClock(T0), keyPrefix });
      await limiter.check(req("a", 10));
      const [key] = await countersUnder(client, keyPrefix);
      await client.send("SET", [key!, "not a window"]);
      const error = await limiter.check(req("a", 10)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WindowStoreUnavailable);
      expect(String((error as Error).cause)).toContain("WRONGTYPE");
    });

    test("a server that never answers: the check rejects with WindowStoreUnavailable once the timeout passed", async () => {
      const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      // Bun's defaults: the command waits in the offline queue while the connection never completes.
      const silentClient = new RedisClient(`redis://127.0.0.1:${silent.port}`);
      try {
        const timeoutMs = 300;
        const limiter = new RedisWindowLimiter({ client: silentClient, clock: new TestClock(T0), keyPrefix: freshPrefix(), timeoutMs });
        const outcome = await rejection(limiter.check(req("a", 10)));
        expect(outcome.unavailable).toBe(true);
        expect(outcome.afterMs).toBeGreaterThanOrEqual(timeoutMs - 5);
        expect(outcome.afterMs).toBeLessThan(timeoutMs + TIMER_SLACK_MS);
      } finally {
        silentClient.close();
        silent.stop(true);
      }
    });
  });
});
