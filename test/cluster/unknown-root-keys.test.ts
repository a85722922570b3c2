/**
 * Two cluster nodes on one PostgreSQL: a root key that node A remembered as unknown, created
 * through node B afterwards, works on A as soon as B's change notice reached it (A's change
 * watcher forgets its unknown hashes with its cached principals), without waiting for the TTL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { clusterServers, type ClusterServers } from "../support/cluster-backend.ts";
import { TEST_ACTOR } from "../support/contract.ts";
import { missing, skipWithout } from "../support/tools.ts";

/** The bound a change takes to reach every node (docs/cluster.md); far below the unknown-key TTL set here. */
const CHANGE_BOUND_MS = 1000;
const BAD = "tg_root_unknown_across_nodes_0001";

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "two cluster nodes"))("unknown root keys across nodes", () => {
  let servers: ClusterServers;
  let a: Harness;
  let b: Harness;

  beforeAll(async () => {
    servers = await clusterServers();
    // A TTL of an hour: only the change notice can make A look the key up again.
    a = await startHarness({ servers, env: { TOLLGATE_UNKNOWN_ROOT_KEY_TTL_MS: "3600000" } });
    b = await startHarness({ env: { ...servers.env, TOLLGATE_ROOT_KEY: a.rootKey } });
  }, 60_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  test("a root key created through node B after node A cached it as unknown works on A within the change bound", async () => {
    const listApis = () => a.post("/v2/apis.listApis", {}, { key: BAD });
    const answers = await Promise.all(Array.from({ length: 200 }, listApis));
    expect(answers.every((r) => r.status === 401)).toBe(true);
    const lookups = a.running.services.auth.lookups.sent;
    expect((await listApis()).status).toBe(401);
    expect(a.running.services.auth.lookups.sent).toBe(lookups);

    const createdAt = performance.now();
    await b.running.services.workspaces.createRootKey({ workspace: "default", name: "late", permissions: ["api.*.read_api"], value: BAD }, TEST_ACTOR);
    let status = 401;
    while (status !== 200 && performance.now() - createdAt < 5 * CHANGE_BOUND_MS) {
      status = (await listApis()).status;
      if (status !== 200) await Bun.sleep(5);
    }
    const seenMs = performance.now() - createdAt;
    console.info(`root key created on B works on A after ${seenMs.toFixed(1)} ms`);
    expect(status).toBe(200);
    expect(seenMs).toBeLessThan(CHANGE_BOUND_MS);
  }, 30_000);
});
