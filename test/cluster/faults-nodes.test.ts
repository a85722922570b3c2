/**
 * Two cluster nodes (child processes) on servers of this file's own: one under
 * TOLLGATE_REDIS_UNREACHABLE=open, one under `closed`. Redis stopped, frozen (SIGSTOP) and killed
 * under a load of limit checks: the open node lets checks through and the closed one refuses
 * them, both stay ready, each shows Redis down in /metrics with its counter of requests failed
 * open or closed, and each logs one warning when the outage starts and one when it ends; both
 * count again once Redis is back, without a restart. A node killed (SIGKILL) under metered load:
 * the credits PostgreSQL shows taken are at least the spends it answered VALID and at most those
 * plus the requests it left unanswered (a spend committed as the node died is taken, unanswered:
 * see docs/cluster.md); the other node serves throughout, and the killed one serves again once
 * started on its data dir.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ownClusterServers, type OwnClusterServers } from "../support/cluster-backend.ts";
import { SERVER_START_TIMEOUT_MS } from "../support/servers.ts";
import { startServe } from "../support/cli.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { call, creditsSpent, eventually, meteredLoad, metric, startNode, timedProbe, START_CREDITS, type FaultNode } from "./fault-load.ts";

const RECOVERY_BOUND_MS = 20_000;
const TEST_TIMEOUT_MS = 40_000;
const REDIS_UP = `tollgate_dependency_up{dependency="Redis"}`;
const failedRedis = (mode: "open" | "closed") => `tollgate_dependency_failed_requests_total{dependency="Redis",mode="${mode}"}`;

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "the node and Redis faults under load"))("nodes under load while Redis fails or a node dies", () => {
  let servers: OwnClusterServers;
  let open: FaultNode;
  let closed: FaultNode;
  const rootKey = `tg_fault_${crypto.randomUUID().replaceAll("-", "")}`;

  beforeAll(async () => {
    servers = await ownClusterServers();
    open = await startNode({ ...servers.env, TOLLGATE_REDIS_UNREACHABLE: "open" }, rootKey, servers);
    closed = await startNode({ ...servers.env, TOLLGATE_REDIS_UNREACHABLE: "closed" }, rootKey, servers);
  }, 2 * SERVER_START_TIMEOUT_MS);

  afterAll(async () => {
    open?.kill();
    closed?.kill();
    await servers?.stop();
  });

  const limit = (node: FaultNode, identifier: string) =>
    call(node.served.url, rootKey, "/v2/ratelimit.limit", { namespace: "faults", identifier, limit: 1, duration: 60_000 }).then((res) => res.body.data?.success as boolean | undefined);
  const ready = async (node: FaultNode) => (await fetch(`${node.served.url}/v2/readiness`)).status === 200;
  const outageLines = (node: FaultNode) => node.served.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { level: string; msg: string; dependency?: string })
    .filter((l) => l.dependency === "Redis" && l.level === "warn").map((l) => l.msg);
  /** A node counts again once a second check of one identifier is refused. */
  const counting = async (node: FaultNode) => {
    const identifier = crypto.randomUUID();
    await limit(node, identifier);
    return (await limit(node, identifier)) === false;
  };

  for (const [fault, away, back] of [
    ["stopped", (s: OwnClusterServers) => s.redis.halt(), (s: OwnClusterServers) => s.redis.resume()],
    ["frozen (SIGSTOP)", (s: OwnClusterServers) => void process.kill(s.redis.pid, "SIGSTOP"), (s: OwnClusterServers) => void process.kill(s.redis.pid, "SIGCONT")],
    ["killed (SIGKILL)", async (s: OwnClusterServers) => { process.kill(s.redis.pid, "SIGKILL"); await s.redis.halt(); }, (s: OwnClusterServers) => s.redis.resume()],
  ] as const) {
    test(`Redis ${fault} under load: open lets checks through, closed refuses them; both ready; /metrics and the log show the outage once; back: both count again`, async () => {
      expect([await counting(open), await counting(closed)]).toEqual([true, true]);
      const warned = [outageLines(open).length, outageLines(closed).length];
      const failedBefore = [(await metric(open.served.url, failedRedis("open")))!, (await metric(closed.served.url, failedRedis("closed")))!];
      // Each node under a load of checks of identifiers never seen: all pass while Redis answers.
      const loads = [open, closed].map((node) => timedProbe(async () => (await limit(node, crypto.randomUUID())) !== undefined));
      await away(servers);
      const seen: Array<Record<string, unknown>> = [];
      try {
        for (const [node, mode] of [[open, "open"], [closed, "closed"]] as const) {
          await eventually(`${mode} node shows Redis down`, RECOVERY_BOUND_MS, async () => (await metric(node.served.url, REDIS_UP)) === 0);
          await eventually(`${mode} node counts requests failed ${mode}`, RECOVERY_BOUND_MS, async () => (await metric(node.served.url, failedRedis(mode)))! > failedBefore[mode === "open" ? 0 : 1]!);
          seen.push({ mode, ready: await ready(node), check: await limit(node, crypto.randomUUID()) });
        }
      } finally {
        await back(servers);
      }
      const [openLoad, closedLoad] = [await loads[0]!.stop(), await loads[1]!.stop()];
      expect(seen).toEqual([{ mode: "open", ready: true, check: true }, { mode: "closed", ready: true, check: false }]);
      expect({ open: openLoad.wrong, closed: closedLoad.wrong }).toEqual({ open: 0, closed: 0 });
      for (const node of [open, closed]) {
        await eventually("counting again", RECOVERY_BOUND_MS, () => counting(node));
        await eventually("Redis shown up", RECOVERY_BOUND_MS, async () => (await metric(node.served.url, REDIS_UP)) === 1);
      }
      console.log(JSON.stringify({ fault, open: openLoad, closed: closedLoad }));
      expect([outageLines(open).slice(warned[0]), outageLines(closed).slice(warned[1])]).toEqual(Array(2).fill(["Redis is unreachable", "Redis is reachable again"]));
    }, TEST_TIMEOUT_MS);
  }

  test("a node killed (SIGKILL) under metered load: VALID answered <= credits taken <= VALID + unanswered; the other serves throughout; started again, it serves", async () => {
    const { apiId } = (await call(open.served.url, rootKey, "/v2/apis.createApi", { name: "node-kill" })).body.data;
    const metered: Array<{ key: string; keyId: string }> = [];
    for (let i = 0; i < 4; i++) metered.push((await call(open.served.url, rootKey, "/v2/keys.createKey", { apiId, credits: { remaining: START_CREDITS } })).body.data);
    const keys = metered.map((m) => m.key);
    const onKilled = meteredLoad(open.served.url, rootKey, keys, 32);
    const onOther = meteredLoad(closed.served.url, rootKey, keys, 8);
    await eventually("load under way", RECOVERY_BOUND_MS, async () => onKilled.tally.valid > 200 && onOther.tally.valid > 50);
    open.served.kill();
    await eventually("the killed node's clients refused", RECOVERY_BOUND_MS, async () => onKilled.tally.unanswered >= 32);
    const otherBefore = onOther.tally.valid;
    await eventually("the other node spends on", RECOVERY_BOUND_MS, async () => onOther.tally.valid > otherBefore + 50);
    const [killed, other] = [await onKilled.stop(), await onOther.stop()];
    const spent = await creditsSpent(servers.env.TOLLGATE_DATABASE_URL!, metered.map((m) => m.keyId));
    const answered = killed.valid + other.valid;
    // Requests in flight at the kill: one per worker at most; the rest were refused before they were sent.
    const inFlightAtKill = 32;
    console.log(JSON.stringify({ killedValid: killed.valid, otherValid: other.valid, spent, unanswered: killed.unanswered, failed: Object.fromEntries(killed.failed) }));
    expect([killed.other, other.other, other.unanswered, [...other.failed]]).toEqual([[], [], 0, []]);
    expect(spent).toBeGreaterThanOrEqual(answered);
    expect(spent).toBeLessThanOrEqual(answered + inFlightAtKill);
    // The same data dir, started again: it serves.
    const again = await startServe({ dataDir: open.dataDir.dir, env: { ...servers.env, TOLLGATE_ROOT_KEY: rootKey } });
    open = { ...open, served: again, kill: () => { again.kill(); open.dataDir.cleanup(); } };
    expect((await call(again.url, rootKey, "/v2/keys.verifyKey", { key: keys[0] })).body.data.code).toBe("VALID");
  }, TEST_TIMEOUT_MS);
});
