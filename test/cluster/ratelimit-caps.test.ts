/**
 * A cluster node holds its rate-limit windows in Redis within the same caps as a box: a flood of
 * distinct identifiers through ratelimits.limit leaves the workspace's windows at its cap
 * (TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB), counted in Redis, while every check is still answered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { startHarness, type Harness } from "../support/harness.ts";
import { clusterServers } from "../support/cluster-backend.ts";
import { SERVER_START_TIMEOUT_MS } from "../support/servers.ts";
import { missing, skipWithout } from "../support/tools.ts";

const MIB = 1024 * 1024;
const IDENTIFIERS = 3_000;
const IN_FLIGHT = 50;

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "the Redis window caps of a cluster node"))("a cluster node's windows in Redis", () => {
  let node: Harness;
  let redis: RedisClient;

  beforeAll(async () => {
    const servers = await clusterServers();
    node = await startHarness({ servers, env: { TOLLGATE_RATELIMIT_MEMORY_MB: "2", TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB: "1" } });
    redis = new RedisClient(servers.env.TOLLGATE_REDIS_URL!);
    await redis.connect();
  }, SERVER_START_TIMEOUT_MS);

  afterAll(async () => {
    redis?.close();
    // Stops the servers too.
    await node?.stop();
  });

  test("a flood of distinct identifiers stays within the workspace's cap, every check answered", async () => {
    let passed = 0;
    for (let start = 0; start < IDENTIFIERS; start += IN_FLIGHT) {
      const answers = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) =>
        node.post("/v2/ratelimits.limit", { namespace: "flood", identifier: `user_${start + j}`, limit: 5, duration: 60_000 })));
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        if ((answer.body as { data: { success: boolean } }).data.success) passed++;
      }
    }
    expect(passed).toBe(IDENTIFIERS);
    const total = Number(await redis.send("GET", ["tollgate:rl:#total"]));
    expect(total).toBeLessThanOrEqual(MIB);
    // Full: the flood went past the cap, so the cap is what holds it.
    expect(total).toBeGreaterThan(MIB - 1_000);
    const windows = (await redis.send("KEYS", ["tollgate:rl:*:*"]) as string[]).length;
    expect(windows).toBeLessThan(IDENTIFIERS);
  }, 60_000);
});
