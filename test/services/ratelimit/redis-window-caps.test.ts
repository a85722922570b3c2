/**
 * The Redis window store held within the memory caps, by the embedded limiter's rule: a workspace
 * over its own cap gives up its own oldest windows and never another workspace's live ones; at the
 * total cap expired windows of any workspace go first; a window of the batch is never given up, and
 * with nothing left to give a new window is not kept. Caps are set in multiples of one window's
 * charge, read from Redis, so the cases do not depend on the fixed cost's value.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RedisClient } from "bun";
import { RedisWindowLimiter, redisWindowClient, type LimitRequest, type WindowCaps } from "../../../src/services/ratelimit/index.ts";
import { startRedis, type TestServer } from "../../support/servers.ts";
import { TestClock } from "../../support/test-clock.ts";
import { missing, requireTool, skipWithout } from "../../support/tools.ts";
import { MINUTE, T0 } from "./window-contract.ts";

/** Identifiers of one length, so every window of a workspace is charged alike. */
const id = (i: number) => `user-${String(i).padStart(4, "0")}`;
const check = (workspace: string, identifier: string, cost = 1, durationMs = MINUTE): LimitRequest =>
  ({ workspace, scope: `${workspace}|ns`, identifier, limit: 10, durationMs, cost });

describe.skipIf(skipWithout(missing.redis(), "the Redis window store"))("RedisWindowLimiter within its caps", () => {
  let redis: TestServer;
  let client: RedisClient;
  /** What one window of ws_a (and of ws_b: same lengths) is charged. */
  let windowBytes = 0;

  beforeAll(async () => {
    requireTool(missing.redis());
    redis = await startRedis();
    client = redisWindowClient(redis.url);
    await client.connect();
    const probe = limiterWith({ workspaceBytes: Number.MAX_SAFE_INTEGER, totalBytes: Number.MAX_SAFE_INTEGER });
    await probe.limiter.check(check("ws_a", id(0)));
    windowBytes = await probe.workspaceBytes("ws_a");
  });

  afterAll(async () => {
    client?.close();
    await redis?.stop();
  });

  function limiterWith(caps: WindowCaps) {
    const keyPrefix = `test:${crypto.randomUUID()}:`;
    const clock = new TestClock(T0);
    // A check waits as long as a loaded machine may need: these cases judge the caps, not the timeout.
    const limiter = new RedisWindowLimiter({ client, clock, keyPrefix, caps, timeoutMs: 10_000 });
    const number = async (key: string) => Number(await client.send("GET", [key]) ?? 0);
    return {
      clock,
      limiter,
      workspaceBytes: (workspace: string) => number(`${keyPrefix}${workspace.length}{${workspace}}#b`),
      totalBytes: () => number(`${keyPrefix}#total`),
      /** How much of its limit of 10 a counter has used now (a cost-0 check charges nothing). */
      used: async (workspace: string, identifier: string) => 10 - (await limiter.check(check(workspace, identifier, 0))).remaining,
      keys: async () => (await client.send("KEYS", [`${keyPrefix}*`]) as string[]).length,
    };
  }

  test("one window is charged a fixed part and two bytes a character of its key", () => {
    expect(windowBytes).toBeGreaterThan(300);
    expect(windowBytes).toBeLessThan(600);
  });

  test("a workspace over its own cap gives up its oldest windows, and never another workspace's", async () => {
    const t = limiterWith({ workspaceBytes: 3 * windowBytes, totalBytes: 100 * windowBytes });
    await t.limiter.check(check("ws_b", id(0), 4));
    for (let i = 0; i < 5; i++) {
      await t.limiter.check(check("ws_a", id(i), 2));
      t.clock.advance(1);
    }
    expect(await t.workspaceBytes("ws_a")).toBe(3 * windowBytes);
    expect(t.limiter.stats().evicted).toBe(2);
    expect([await t.used("ws_a", id(0)), await t.used("ws_a", id(1))]).toEqual([0, 0]);
    expect([await t.used("ws_a", id(2)), await t.used("ws_a", id(3)), await t.used("ws_a", id(4))]).toEqual([2, 2, 2]);
    expect(await t.used("ws_b", id(0))).toBe(4);
    expect(await t.totalBytes()).toBe(4 * windowBytes);
  });

  test("a window charged again is not charged twice, and keeps its place", async () => {
    const t = limiterWith({ workspaceBytes: 2 * windowBytes, totalBytes: 100 * windowBytes });
    for (let i = 0; i < 5; i++) await t.limiter.check(check("ws_a", id(0)));
    expect(await t.workspaceBytes("ws_a")).toBe(windowBytes);
    expect(t.limiter.stats().evicted).toBe(0);
    expect(await t.used("ws_a", id(0))).toBe(5);
  });

  test("at the total cap, another workspace's expired windows go before the workspace's own", async () => {
    const t = limiterWith({ workspaceBytes: 100 * windowBytes, totalBytes: 4 * windowBytes });
    await t.limiter.check(check("ws_b", id(0), 1, 10_000));
    await t.limiter.check(check("ws_b", id(1), 1, 10_000));
    t.clock.advance(MINUTE / 2);
    await t.limiter.check(check("ws_a", id(0)));
    await t.limiter.check(check("ws_a", id(1)));
    // ws_b's windows expired twenty seconds after they started: they make room for ws_a's next two.
    await t.limiter.check(check("ws_a", id(2)));
    await t.limiter.check(check("ws_a", id(3)));
    expect(t.limiter.stats().evicted).toBe(0);
    expect(await t.workspaceBytes("ws_b")).toBe(0);
    expect(await t.totalBytes()).toBe(4 * windowBytes);
    for (let i = 0; i < 4; i++) expect(await t.used("ws_a", id(i))).toBe(1);
    // Nothing expired is left: now ws_a gives up its own oldest.
    await t.limiter.check(check("ws_a", id(4)));
    expect(t.limiter.stats().evicted).toBe(1);
    expect(await t.used("ws_a", id(0))).toBe(0);
  });

  test("a workspace with nothing to give keeps no new window: its check answers from an empty window", async () => {
    const t = limiterWith({ workspaceBytes: 100 * windowBytes, totalBytes: 2 * windowBytes });
    await t.limiter.check(check("ws_b", id(0), 3));
    await t.limiter.check(check("ws_b", id(1), 3));
    const answer = await t.limiter.check(check("ws_a", id(0), 4));
    expect(answer).toMatchObject({ success: true, remaining: 6 });
    expect(t.limiter.stats()).toEqual({ evicted: 0, unkept: 1 });
    expect(await t.used("ws_a", id(0))).toBe(0);
    expect([await t.used("ws_b", id(0)), await t.used("ws_b", id(1))]).toEqual([3, 3]);
  });

  test("a window of the batch being charged is never given up for another of the same batch", async () => {
    const t = limiterWith({ workspaceBytes: windowBytes, totalBytes: 100 * windowBytes });
    const batch = await t.limiter.checkAll([check("ws_a", id(0)), check("ws_a", id(1))]);
    expect(batch.success).toBe(true);
    expect(t.limiter.stats()).toEqual({ evicted: 0, unkept: 1 });
    expect([await t.used("ws_a", id(0)), await t.used("ws_a", id(1))]).toEqual([1, 0]);
  });

  test("every charge is given back once the windows expired and were swept: no index or count is left", async () => {
    const t = limiterWith({ workspaceBytes: 100 * windowBytes, totalBytes: 100 * windowBytes });
    for (let i = 0; i < 10; i++) await t.limiter.check(check("ws_a", id(i), 1, 10_000));
    expect(await t.workspaceBytes("ws_a")).toBe(10 * windowBytes);
    t.clock.advance(20_000);
    // The next charge of the workspace sweeps what expired (Redis has not expired the keys itself yet: real time barely moved).
    await t.limiter.check(check("ws_a", id(99), 1, 10_000));
    expect(await t.workspaceBytes("ws_a")).toBe(windowBytes);
    t.clock.advance(20_000);
    await t.limiter.check(check("ws_a", id(99), 0, 10_000));
    expect(await t.totalBytes()).toBe(0);
    // Only the total's count is left, at zero: the workspace's index and count went with its last window.
    expect(await t.keys()).toBe(1);
  });

  test("three nodes flooding two workspaces at once: each workspace at its cap, and every count equals what its index holds", async () => {
    const caps = { workspaceBytes: 40 * windowBytes, totalBytes: 70 * windowBytes };
    const keyPrefix = `test:${crypto.randomUUID()}:`;
    const clients = Array.from({ length: 3 }, () => redisWindowClient(redis.url));
    try {
      await Promise.all(clients.map((c) => c.connect()));
      const nodes = clients.map((c) => new RedisWindowLimiter({ client: c, clock: new TestClock(T0), keyPrefix, caps, timeoutMs: 10_000 }));
      for (let start = 0; start < 900; start += 150) {
        await Promise.all(Array.from({ length: 150 }, (_, j) => nodes[(start + j) % 3]!.check(check((start + j) % 2 === 0 ? "ws_a" : "ws_b", id(start + j)))));
      }
      const count = async (key: string) => Number(await client.send("GET", [key]) ?? 0);
      const stem = (ws: string) => `${keyPrefix}${ws.length}{${ws}}`;
      let indexed = 0;
      for (const ws of ["ws_a", "ws_b"]) {
        const members = await client.send("ZRANGE", [`${stem(ws)}#i`, "0", "-1"]) as string[];
        // Each indexed window still there, and the workspace's count exactly their charges.
        expect(await client.send("EXISTS", members) as number).toBe(members.length);
        expect(await count(`${stem(ws)}#b`)).toBe(members.length * windowBytes);
        indexed += members.length;
      }
      expect(await count(`${keyPrefix}#total`)).toBe(indexed * windowBytes);
      // Both workspaces within their caps and together at the total's 70 windows, however the checks interleaved.
      expect(indexed * windowBytes).toBeLessThanOrEqual(caps.totalBytes);
      expect(await count(`${stem("ws_a")}#b`)).toBeLessThanOrEqual(caps.workspaceBytes);
      expect(await count(`${stem("ws_b")}#b`)).toBeLessThanOrEqual(caps.workspaceBytes);
      expect(indexed).toBe(70);
    } finally {
      for (const c of clients) c.close();
    }
  });

  test("a flood of distinct identifiers holds the workspace at its cap", async () => {
    const t = limiterWith({ workspaceBytes: 50 * windowBytes, totalBytes: 60 * windowBytes });
    for (let start = 0; start < 2_000; start += 200) {
      await Promise.all(Array.from({ length: 200 }, (_, j) => t.limiter.check(check("ws_a", id(start + j)))));
    }
    expect(await t.workspaceBytes("ws_a")).toBe(50 * windowBytes);
    expect(t.limiter.stats().evicted).toBe(1_950);
    // 50 windows, the workspace's index and count, the total and the workspaces' order.
    expect(await t.keys()).toBe(54);
  });
});
