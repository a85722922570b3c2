/**
 * A cluster node while PostgreSQL or Redis is away, on servers of this file's own (stopping the
 * process's shared PostgreSQL would break the other files' harnesses): a request that needs the
 * missing store answers `service_unavailable` naming it, never `unexpected_error` and never its
 * URL; readiness stays 200 (every node shares the servers: their outage takes no node out of a
 * balancer) and answers within its bound even while a server hangs; the outage is one warning
 * when it starts (not one a request); rate-limit checks answer by TOLLGATE_REDIS_UNREACHABLE; and
 * all of it recovers once the server is back, without restarting the node. Waiting on a server's
 * state polls with a deadline.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.ts";
import { ownClusterServers, type OwnClusterServers } from "../support/cluster-backend.ts";
import { expectError } from "../support/contract.ts";
import { SERVER_START_TIMEOUT_MS } from "../support/servers.ts";
import { missing, skipWithout } from "../support/tools.ts";

const SERVICE_UNAVAILABLE = "service/application/service_unavailable";
/** In the database URL; PostgreSQL's trust authentication ignores it. */
const PASSWORD = "pw-outage-5e1d";
/** How long an answer may take while a server is away: the probe's bound (1 s), with room for a loaded machine. */
const ANSWER_BOUND_MS = 3000;
/** How long a node may take to notice that a server is back. */
const RECOVERY_BOUND_MS = 15_000;
const TEST_TIMEOUT_MS = 60_000;
/** How long `node`'s requests wait for PostgreSQL (TOLLGATE_DATABASE_TIMEOUT_MS). */
const DATABASE_TIMEOUT_MS = 1000;
/** How long a credit spend waits for PostgreSQL: min(4 s, TOLLGATE_DATABASE_TIMEOUT_MS). */
const SPEND_BOUND_MS = Math.min(4000, DATABASE_TIMEOUT_MS);

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "the outage checks of a cluster node"))("a cluster node while a server is away", () => {
  let servers: OwnClusterServers;
  /** TOLLGATE_REDIS_UNREACHABLE=open (the default). */
  let node: Harness;
  /** A second node on the same servers, TOLLGATE_REDIS_UNREACHABLE=closed; it answers to `node`'s root key. */
  let closedNode: Harness;
  /** `node`'s log, JSON lines. */
  const logLines: string[] = [];

  beforeAll(async () => {
    servers = await ownClusterServers({ password: PASSWORD });
    node = await startHarness({ servers, env: { TOLLGATE_DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS) }, logLines });
    closedNode = await startHarness({ env: { ...servers.env, TOLLGATE_REDIS_UNREACHABLE: "closed", TOLLGATE_ROOT_KEY: node.rootKey } });
  }, 2 * SERVER_START_TIMEOUT_MS);

  afterAll(async () => {
    await closedNode?.stop();
    // Stops the servers too.
    await node?.stop();
  });

  const post = (on: Harness, path: string, body: unknown) => on.post(path, body, { key: node.rootKey });

  async function readiness(on: Harness): Promise<ApiResponse & { elapsedMs: number }> {
    const startedMs = performance.now();
    const res = await fetch(`${on.url}/v2/readiness`);
    return { status: res.status, headers: res.headers, body: await res.json(), elapsedMs: performance.now() - startedMs };
  }

  /** Polls `holds` until it does; fails past RECOVERY_BOUND_MS. */
  async function eventually(what: string, holds: () => Promise<boolean>): Promise<void> {
    const deadline = performance.now() + RECOVERY_BOUND_MS;
    while (!(await holds())) {
      if (performance.now() > deadline) throw new Error(`${what}: not within ${RECOVERY_BOUND_MS} ms`);
      await Bun.sleep(50);
    }
  }

  /** Neither the servers' addresses nor the password appear in the answer. */
  function expectNothingOfTheUrls(res: ApiResponse): void {
    const text = JSON.stringify(res.body);
    for (const secret of [PASSWORD, "postgres://", "redis://", new URL(servers.postgres.url).port, new URL(servers.redis.url).port]) expect(text).not.toContain(secret);
  }

  /** Ready, within the bound, whatever the shared servers do. */
  function expectReady(res: Awaited<ReturnType<typeof readiness>>): void {
    expect({ status: res.status, inTime: res.elapsedMs < ANSWER_BOUND_MS }).toEqual({ status: 200, inTime: true });
  }

  const limit = (on: Harness, identifier: string) =>
    post(on, "/v2/ratelimit.limit", { namespace: "outage", identifier, limit: 1, duration: 60_000 }).then((res) => {
      expect(res.status).toBe(200);
      return res.body.data.success as boolean;
    });

  test("both nodes ready while both servers answer", async () => {
    expect((await readiness(node)).status).toBe(200);
    expect((await readiness(closedNode)).status).toBe(200);
  });

  test("Redis stopped: checks pass (open) or are refused (closed), both nodes stay ready; Redis back: checks count again", async () => {
    // The namespace is created and cached on both nodes before Redis goes.
    expect(await limit(node, "before-a")).toBe(true);
    expect(await limit(closedNode, "before-b")).toBe(true);
    await servers.redis.halt();
    try {
      expectReady(await readiness(node));
      expectReady(await readiness(closedNode));
      expect(await limit(node, "during")).toBe(true);
      expect(await limit(closedNode, "during")).toBe(false);
      // Records do not need Redis.
      expect((await post(node, "/v2/apis.createApi", { name: "without-redis" })).status).toBe(200);
    } finally {
      await servers.redis.resume();
    }
    // The open node was ready throughout: it is back once a second check of one identifier is refused.
    let probe = 0;
    await eventually("open node counting again", async () => {
      const identifier = `probe-${++probe}`;
      await limit(node, identifier);
      return !(await limit(node, identifier));
    });
    await eventually("closed node counting again", async () => limit(closedNode, `probe-${++probe}`));
    expect(await limit(node, "after")).toBe(true);
    expect(await limit(closedNode, "after")).toBe(false);
  }, TEST_TIMEOUT_MS);

  test("Redis frozen (SIGSTOP, commands hang): readiness and checks answer within their bounds, checks by the setting; thawed: counting again", async () => {
    process.kill(servers.redis.pid, "SIGSTOP");
    try {
      for (let i = 0; i < 2; i++) expectReady(await readiness(closedNode));
      expectReady(await readiness(node));
      expect(await limit(node, "frozen")).toBe(true);
      expect(await limit(closedNode, "frozen")).toBe(false);
    } finally {
      process.kill(servers.redis.pid, "SIGCONT");
    }
    let probe = 0;
    await eventually("closed node counting again", async () => limit(closedNode, `thawed-${++probe}`));
  }, TEST_TIMEOUT_MS);

  test("PostgreSQL stopped: records routes and cold verifications answer service_unavailable naming it, the node stays ready; it back: they recover", async () => {
    const { apiId } = (await post(node, "/v2/apis.createApi", { name: "before-pg-outage" })).body.data;
    const cached = (await post(node, "/v2/keys.createKey", { apiId })).body.data;
    const cold = (await post(node, "/v2/keys.createKey", { apiId })).body.data;
    expect((await post(node, "/v2/keys.verifyKey", { key: cached.key })).body.data.code).toBe("VALID");
    await servers.postgres.halt();
    try {
      // The last: a root key the node has not seen, which only PostgreSQL could tell.
      const requests: Array<[string, unknown, string]> = [
        ["/v2/apis.createApi", { name: "during-pg-outage" }, node.rootKey],
        ["/v2/keys.getKey", { keyId: cold.keyId }, node.rootKey],
        ["/v2/keys.verifyKey", { key: cold.key }, node.rootKey],
        ["/v2/apis.listApis", {}, `tg_root_${"u".repeat(24)}`],
      ];
      for (const [path, body, key] of requests) {
        const startedMs = performance.now();
        const res = await node.post(path, body, { key });
        expect({ path, elapsedMs: performance.now() - startedMs < ANSWER_BOUND_MS }).toEqual({ path, elapsedMs: true });
        expectError(node, res, 500, SERVICE_UNAVAILABLE);
        expect(res.body.error.detail).toContain("PostgreSQL");
        expect(res.body.error.detail).toContain("try again");
        expectNothingOfTheUrls(res);
      }
      // One warning for the outage, with the client's code and nothing of the address; none a request.
      const warnings = logLines.map((line) => JSON.parse(line)).filter((l) => l.level === "warn" && l.dependency === "PostgreSQL");
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ msg: "PostgreSQL is unreachable", reason: expect.stringMatching(/ERR_POSTGRES_|StoreUnreachable|PostgreSQL/) });
      expectNothingOfTheUrls({ status: 0, headers: new Headers(), body: warnings });
      expect(logLines.map((line) => JSON.parse(line)).filter((l) => l.msg === "a server is unreachable" && l.level === "warn")).toEqual([]);
      // A key already cached answers from the cache, as before.
      expect((await post(node, "/v2/keys.verifyKey", { key: cached.key })).body.data.code).toBe("VALID");
      expectReady(await readiness(node));
    } finally {
      await servers.postgres.resume();
    }
    await eventually("PostgreSQL reachable again", async () => logLines.some((line) => JSON.parse(line).msg === "PostgreSQL is reachable again"));
    // A pooled connection the restart broke may fail one request more; then they succeed.
    let attempt = 0;
    await eventually("records again", async () => (await post(node, "/v2/apis.createApi", { name: `after-pg-outage-${++attempt}` })).status === 200);
    expect((await post(node, "/v2/keys.verifyKey", { key: cold.key })).body.data.code).toBe("VALID");
  }, TEST_TIMEOUT_MS);

  test("PostgreSQL frozen (SIGSTOP, connections hang): readiness answers ready within its bound, a spend within its own, naming it; thawed: spends again", async () => {
    const { apiId } = (await post(node, "/v2/apis.createApi", { name: "before-pg-freeze" })).body.data;
    const metered = (await post(node, "/v2/keys.createKey", { apiId, credits: { remaining: 10 } })).body.data;
    expect((await post(node, "/v2/keys.verifyKey", { key: metered.key })).body.data.code).toBe("VALID");
    const pids = [servers.postgres.pid, ...childrenOf(servers.postgres.pid)];
    for (const pid of pids) process.kill(pid, "SIGSTOP");
    try {
      // Twice: a probe still hanging from the first must not hold up the second.
      for (let i = 0; i < 2; i++) expectReady(await readiness(node));
      const startedMs = performance.now();
      const spent = await post(node, "/v2/keys.verifyKey", { key: metered.key });
      expect(performance.now() - startedMs).toBeLessThan(SPEND_BOUND_MS + ANSWER_BOUND_MS);
      expectError(node, spent, 500, SERVICE_UNAVAILABLE);
      expect(spent.body.error.detail).toContain("PostgreSQL");
      // A unit of work and a key's cold load wait TOLLGATE_DATABASE_TIMEOUT_MS, not until PostgreSQL returns.
      for (const [path, body] of [["/v2/apis.createApi", { name: "during-pg-freeze" }], ["/v2/keys.verifyKey", { key: `${metered.key}x` }], ["/v2/apis.listApis", {}]] as const) {
        const asked = performance.now();
        const res = await post(node, path, body);
        expect({ path, inTime: performance.now() - asked < DATABASE_TIMEOUT_MS + ANSWER_BOUND_MS }).toEqual({ path, inTime: true });
        expectError(node, res, 500, SERVICE_UNAVAILABLE);
        expect(res.body.error.detail).toContain("PostgreSQL");
      }
    } finally {
      for (const pid of pids) process.kill(pid, "SIGCONT");
    }
    await eventually("spending again", async () => (await post(node, "/v2/keys.verifyKey", { key: metered.key })).body.data?.code === "VALID");
  }, TEST_TIMEOUT_MS);
});

/** The PIDs of the processes whose parent is `pid` (PostgreSQL's backends and workers). */
function childrenOf(pid: number): number[] {
  return Bun.spawnSync(["pgrep", "-P", String(pid)]).stdout.toString().split("\n").filter((line) => line !== "").map(Number);
}
