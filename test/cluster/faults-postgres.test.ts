/**
 * A cluster node (a child process) under a load of metered verifications while its PostgreSQL is
 * frozen (SIGSTOP), stopped, and killed (SIGKILL), on servers of this file's own. After each:
 * the credits PostgreSQL shows taken equal the verifications answered VALID (a spend answered
 * with an error is never charged, once the node has settled what it gave up on); during each,
 * cached keys without credits and Redis-backed limit checks answer within 1 s, the node stays
 * ready, and /metrics shows PostgreSQL down; one warning in the log when the outage starts and
 * one when it ends; and the node serves again without a restart. Waiting polls states with
 * deadlines; a fault lasts until the load has met it, not for a set time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { ownClusterServers, type OwnClusterServers } from "../support/cluster-backend.ts";
import { SERVER_START_TIMEOUT_MS } from "../support/servers.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { call, childrenOf, creditsSpent, eventually, meteredLoad, metric, startNode, timedProbe, START_CREDITS, type FaultNode } from "./fault-load.ts";

/** TOLLGATE_DATABASE_TIMEOUT_MS of the node: a spend waits at most min(4 s, this). */
const DATABASE_TIMEOUT_MS = 2000;
/** What the docs promise a request waits for PostgreSQL at most, with room for a loaded machine. */
const ANSWER_BOUND_MS = DATABASE_TIMEOUT_MS + 1500;
/** Cached keys and Redis-backed checks while PostgreSQL is away. */
const CACHED_BOUND_MS = 1000;
const RECOVERY_BOUND_MS = 20_000;
const TEST_TIMEOUT_MS = 40_000;
const PG_UP = `tollgate_dependency_up{dependency="PostgreSQL"}`;

type Probed = Awaited<ReturnType<ReturnType<typeof timedProbe>["stop"]>>;

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "the PostgreSQL faults under load"))("a node under load while PostgreSQL fails", () => {
  let servers: OwnClusterServers;
  let node: FaultNode;
  const rootKey = `tg_fault_${crypto.randomUUID().replaceAll("-", "")}`;
  let metered: Array<{ key: string; keyId: string }> = [];
  let cachedKey = "";

  beforeAll(async () => {
    servers = await ownClusterServers();
    // Test servers run with synchronous_commit off; a kill must not lose an answered commit.
    const admin = new SQL(servers.postgres.url, { max: 1 });
    await admin.unsafe(`ALTER DATABASE own SET synchronous_commit = on`);
    await admin.close();
    node = await startNode({ ...servers.env, TOLLGATE_DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS) }, rootKey, servers);
    const { apiId } = (await call(node.served.url, rootKey, "/v2/apis.createApi", { name: "faults" })).body.data;
    for (let i = 0; i < 4; i++) metered.push((await call(node.served.url, rootKey, "/v2/keys.createKey", { apiId, credits: { remaining: START_CREDITS } })).body.data);
    cachedKey = (await call(node.served.url, rootKey, "/v2/keys.createKey", { apiId })).body.data.key;
  }, 2 * SERVER_START_TIMEOUT_MS);

  afterAll(async () => {
    node?.kill();
    await servers?.stop();
  });

  const url = () => node.served.url;
  const verifyCached = async () => (await call(url(), rootKey, "/v2/keys.verifyKey", { key: cachedKey })).body.data?.code === "VALID";
  const limitCheck = async () => (await call(url(), rootKey, "/v2/ratelimit.limit", { namespace: "faults", identifier: crypto.randomUUID(), limit: 5, duration: 60_000 })).body.data?.success === true;
  const readyNow = async () => (await fetch(`${url()}/v2/readiness`)).status === 200;

  /**
   * Runs the load, applies `fault` once the load runs, keeps it until `enough` spends were answered
   * service_unavailable, ends it with `heal`, then reconciles.
   */
  async function underLoad(fault: () => Promise<void> | void, heal: () => Promise<void> | void) {
    // Everything cached and answering first.
    for (const m of metered) expect((await call(url(), rootKey, "/v2/keys.verifyKey", { key: m.key })).body.data.code).toBe("VALID");
    expect(await verifyCached()).toBe(true);
    expect(await limitCheck()).toBe(true);
    const before = await creditsSpent(servers.env.TOLLGATE_DATABASE_URL!, metered.map((m) => m.keyId));
    const countersBefore = await counters();
    const load = meteredLoad(url(), rootKey, metered.map((m) => m.key), Number(process.env.FAULT_WORKERS ?? 12));
    await eventually("load under way", RECOVERY_BOUND_MS, async () => load.tally.valid > 50);
    await fault();
    const cached = timedProbe(verifyCached);
    const limits = timedProbe(limitCheck);
    const slowest = { failedMs: 0 };
    let readyDuring = true;
    // Stopped before the heal, whose start of PostgreSQL waits synchronously in this process.
    let probed: [Probed, Probed] | undefined;
    try {
      // The fault lasts until the node has answered three rounds of the load unavailable (a freeze: about three spend bounds) and shows it.
      await eventually("spends answered service_unavailable", RECOVERY_BOUND_MS, async () => (load.tally.failed.get("service_unavailable") ?? 0) >= 36);
      await eventually("PostgreSQL shown down", RECOVERY_BOUND_MS, async () => (await metric(url(), PG_UP)) === 0);
      readyDuring = await readyNow();
      const asked = performance.now();
      const res = await call(url(), rootKey, "/v2/keys.verifyKey", { key: metered[0]!.key });
      slowest.failedMs = performance.now() - asked;
      expect(res.status).toBe(500);
    } finally {
      probed = [await cached.stop(), await limits.stop()];
      await heal();
    }
    const [cachedSeen, limitsSeen] = probed!;
    const validAtHeal = load.tally.valid;
    try {
      await eventually("spends granted again", RECOVERY_BOUND_MS, async () => load.tally.valid > validAtHeal + 50 && (await metric(url(), PG_UP)) === 1);
    } catch (error) {
      console.log(JSON.stringify({ valid: load.tally.valid, validAtHeal, failed: Object.fromEntries(load.tally.failed), up: await metric(url(), PG_UP) }));
      console.log(node.served.stderr().split("\n").slice(-15).join("\n"));
      throw error;
    }
    const tally = await load.stop();
    await eventually("every spend given up on settled", RECOVERY_BOUND_MS, async () => (await metric(url(), "tollgate_credit_spends_unsettled")) === 0);
    const spent = (await creditsSpent(servers.env.TOLLGATE_DATABASE_URL!, metered.map((m) => m.keyId))) - before;
    const countersAfter = await counters();
    const counted = { failedClosed: countersAfter.failedClosed - countersBefore.failedClosed, settled: countersAfter.settled - countersBefore.settled };
    const report = { valid: tally.valid, spent, counted, failed: Object.fromEntries(tally.failed), other: tally.other.slice(0, 3), cachedSeen, limitsSeen, readyDuring, spendFailedMs: Math.round(slowest.failedMs) };
    console.log(JSON.stringify(report));
    return report;
  }

  /** Requests PostgreSQL's absence failed closed, and spend statements given up on and settled, so far. */
  async function counters(): Promise<{ failedClosed: number; settled: number }> {
    const settled = await Promise.all(["cancelled", "refunded"].map((outcome) => metric(url(), `tollgate_credit_spends_settled_total{outcome="${outcome}"}`)));
    return { failedClosed: (await metric(url(), `tollgate_dependency_failed_requests_total{dependency="PostgreSQL",mode="closed"}`))!, settled: settled[0]! + settled[1]! };
  }

  function expectReconciled(report: Awaited<ReturnType<typeof underLoad>>): void {
    expect(report.other).toEqual([]);
    // Every request answered service_unavailable counted failed closed (the probe request's too); every spend given up on settled.
    expect(report.counted.failedClosed).toBeGreaterThanOrEqual(report.failed.service_unavailable ?? 0);
    expect(report.counted.settled).toBeGreaterThan(0);
    expect(report.spent).toBe(report.valid);
    expect(report.readyDuring).toBe(true);
    expect(report.spendFailedMs).toBeLessThan(ANSWER_BOUND_MS);
    expect({ cached: report.cachedSeen.wrong, limits: report.limitsSeen.wrong }).toEqual({ cached: 0, limits: 0 });
    expect(report.cachedSeen.maxMs).toBeLessThan(CACHED_BOUND_MS);
    expect(report.limitsSeen.maxMs).toBeLessThan(CACHED_BOUND_MS);
  }

  test("frozen (SIGSTOP), then thawed: spent == answered VALID; cached keys and limits answer within 1 s; ready throughout", async () => {
    let pids: number[] = [];
    const report = await underLoad(() => {
      pids = [servers.postgres.pid, ...childrenOf(servers.postgres.pid)];
      for (const pid of pids) process.kill(pid, "SIGSTOP");
    }, () => {
      for (const pid of pids) process.kill(pid, "SIGCONT");
    });
    expectReconciled(report);
  }, TEST_TIMEOUT_MS);

  test("stopped (fast shutdown), then started again: spent == answered VALID; cached keys and limits answer within 1 s; ready throughout", async () => {
    const report = await underLoad(() => servers.postgres.halt(), () => servers.postgres.resume());
    expectReconciled(report);
  }, TEST_TIMEOUT_MS);

  test("killed (SIGKILL, every process), then started again: spent == answered VALID; cached keys and limits answer within 1 s; ready throughout", async () => {
    const report = await underLoad(async () => {
      const pids = [servers.postgres.pid, ...childrenOf(servers.postgres.pid)];
      for (const pid of pids) process.kill(pid, "SIGKILL");
      await servers.postgres.halt();
    }, () => servers.postgres.resume());
    expectReconciled(report);
  }, TEST_TIMEOUT_MS);

  test("the log has one warning when each outage started and one when it ended, not one a request", () => {
    const lines = node.served.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { level: string; msg: string; dependency?: string });
    const outage = lines.filter((l) => l.dependency === "PostgreSQL" && l.level === "warn");
    expect(outage.map((l) => l.msg)).toEqual(Array(3).fill(["PostgreSQL is unreachable", "PostgreSQL is reachable again"]).flat());
  });
});
