/**
 * keys.verifyKey while other workspaces keep runaway analytics queries going. BENCH_RUNAWAY_WORKSPACES
 * workspaces (4 by default: more than the 2 query processes) each keep their whole share of runaway
 * queries in flight (the default running and waiting ones), resent as soon as one answers: a three-way
 * join of 2,000 events whose WHERE rejects every row, so only the kill at the deadline (5 s, the
 * default) ends it, and every kill costs a fresh query process. verifyKey (permission query and
 * credit spend, 1,000 keys) is measured idle and under that load with wrk (50 connections,
 * loopback, BENCH_SECONDS each) in BENCH_ROUNDS rounds, and the bare Bun.serve echo alike in the
 * same rounds, for the machine's own share of the slowdown. Target: verifyKey's p99 under the
 * runaways at most 2 × its idle p99 (medians over the rounds).
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildServices, openDataDir } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { systemClock } from "../src/lib/clock.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { childProcesses, cpuMs, formatMeasured, measure, MEASURED_HEADER, median, postRandomBodiesLua, startServer, startTollgate, stopOnSignal, tempDir, wrk, type Child, type Measured } from "./lib.ts";
import { seedKeys } from "./seed.ts";
import { verifyBody } from "./verify.ts";
import { answered } from "../src/storage/work.ts";

const WORKSPACES = Number(process.env.BENCH_RUNAWAY_WORKSPACES ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
if (![WORKSPACES, SECONDS, ROUNDS].every((n) => Number.isInteger(n) && n >= 1)) throw new Error("BENCH_RUNAWAY_WORKSPACES, BENCH_SECONDS and BENCH_ROUNDS must be positive integers");
const KEY_COUNT = 1_000;
const EVENTS_PER_WORKSPACE = 2_000;
/** Queries each runaway workspace keeps in flight: its whole default share, running and waiting. */
const SHARE = loadConfig({}).analyticsQueriesPerWorkspace;
const IN_FLIGHT = SHARE.running + SHARE.waiting;
/** After the runaways start, before measuring: every query process has started and is busy. */
const RAMP_MS = 3_000;
const RUNAWAY = "SELECT count() AS n FROM key_verifications_v1 AS a, key_verifications_v1 AS b, key_verifications_v1 AS c WHERE a.latency + b.latency + c.latency < 0";

/** Workspaces with analytics on, each with EVENTS_PER_WORKSPACE events and a root key that may read them. */
async function seedRunawayWorkspaces(dataDir: string): Promise<string[]> {
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const opened = openDataDir(config, silentLogger);
  try {
    const services = buildServices(opened, config, systemClock);
    const actor = { type: "cli" as const, id: "bench" };
    const keys: string[] = [];
    for (let w = 0; w < WORKSPACES; w++) {
      const workspace = answered(services.workspaces.create({ name: `runaway_${w}`, analyticsEnabled: true }, actor));
      keys.push(answered(services.workspaces.createRootKey({ workspace: workspace.name, name: "runaway", permissions: ["api.*.read_analytics"] }, actor)).key);
      const keyOf = { workspaceId: workspace.id, keySpaceId: "ks_runaway", keyId: "key_runaway", identityId: "", externalId: "" };
      for (let i = 0; i < EVENTS_PER_WORKSPACE; i++) {
        services.verificationEvents.record({ timeMs: Date.now() - i, ...keyOf, outcome: "VALID", tags: [], spentCredits: 0, latencyMs: 1 });
      }
      // A workspace at a time: the buffer holds a bounded number of events.
      await services.verificationEvents.flush();
    }
    return keys;
  } finally {
    opened.close();
  }
}

interface Attack {
  statuses: Map<number, number>;
  /** CPU time each query process seen used while it ran (up to its last reading), in ms. */
  processCpuMs: Map<number, number>;
  stop(): Promise<void>;
}

/** The query processes of `serverPid` right now (children started with the hidden command). */
function queryProcesses(serverPid: number): number[] {
  return childProcesses(serverPid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("analytics-query-process");
    } catch {
      return false;
    }
  });
}

/** Every runaway workspace keeps IN_FLIGHT queries going until stop(), which waits for the last answers. */
function startAttack(server: Child, rootKeys: string[]): Attack {
  const attack = { statuses: new Map<number, number>(), processCpuMs: new Map<number, number>() };
  // Processes left idle by an earlier round count from here; new ones from their start.
  const baseline = new Map(queryProcesses(server.pid).map((pid) => [pid, cpuMs(pid)]));
  let running = true;
  const loop = async (rootKey: string) => {
    while (running) {
      const res = await fetch(`${server.url}/v2/analytics.getVerifications`, {
        method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify({ query: RUNAWAY }),
      });
      await res.arrayBuffer();
      attack.statuses.set(res.status, (attack.statuses.get(res.status) ?? 0) + 1);
      // Over its share: back off as told, as a well-behaved client would (and a hostile one gains nothing by not).
      if (res.status === 429) await Bun.sleep(Number(res.headers.get("retry-after") ?? 1) * 1000);
    }
  };
  const loops = rootKeys.flatMap((key) => Array.from({ length: IN_FLIGHT }, () => loop(key)));
  const sampler = setInterval(() => {
    for (const pid of queryProcesses(server.pid)) {
      const used = cpuMs(pid) - (baseline.get(pid) ?? 0);
      if (!Number.isNaN(used)) attack.processCpuMs.set(pid, used);
    }
  }, 100);
  return {
    ...attack,
    async stop() {
      running = false;
      await Promise.all(loops);
      clearInterval(sampler);
    },
  };
}

interface Round {
  echoIdle: Measured;
  idle: Measured;
  runaway: Measured;
  echoRunaway: Measured;
  statuses: Map<number, number>;
  processes: number;
  /** CPU the query processes used, in cores, over the time the runaways ran. */
  processCores: number;
}

async function round(echo: Child, tollgate: Child, lua: string, rootKeys: string[]): Promise<Round> {
  const echoIdle = await measure(echo, lua, SECONDS);
  const idle = await measure(tollgate, lua, SECONDS);
  const started = performance.now();
  const attack = startAttack(tollgate, rootKeys);
  await Bun.sleep(RAMP_MS);
  const runaway = await measure(tollgate, lua, SECONDS);
  const echoRunaway = await measure(echo, lua, SECONDS);
  await attack.stop();
  const processCpuMs = [...attack.processCpuMs.values()].reduce((a, b) => a + b, 0);
  return {
    echoIdle, idle, runaway, echoRunaway, statuses: attack.statuses, processes: attack.processCpuMs.size,
    processCores: processCpuMs / (performance.now() - started),
  };
}

async function main(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-runaway-");
  const { rootKey, keys } = seedKeys(dataDir, KEY_COUNT, { credits: 1_000_000_000 });
  const rootKeys = await seedRunawayWorkspaces(dataDir);
  const lua = postRandomBodiesLua("/v2/keys.verifyKey", rootKey, keys.map(verifyBody));
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir });
  const unhook = stopOnSignal([echo.stop, tollgate.stop]);
  const rounds: Round[] = [];
  try {
    // Warm-up: every key cached, the JIT past its start.
    await wrk(tollgate.url, lua, { seconds: 3 });
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(echo, tollgate, lua, rootKeys));
  } finally {
    unhook();
    await tollgate.stop();
    await echo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(report(rounds));
}

function report(rounds: Round[]): string {
  const out = [
    `### keys.verifyKey while ${WORKSPACES} workspaces keep runaway analytics queries going (${KEY_COUNT.toLocaleString("en")} keys, ` +
      `permission query + credit spend, 50 connections, ${ROUNDS} × ${SECONDS} s per phase)\n`,
    MEASURED_HEADER,
  ];
  rounds.forEach((r, i) => {
    const round = `round ${i + 1}`;
    out.push(formatMeasured(`Bun.serve echo, idle, ${round}`, r.echoIdle), formatMeasured(`tollgate keys.verifyKey, idle, ${round}`, r.idle));
    out.push(formatMeasured(`tollgate keys.verifyKey, runaways, ${round}`, r.runaway), formatMeasured(`Bun.serve echo, runaways, ${round}`, r.echoRunaway));
  });
  /** The median of `pick` under the runaways over its median idle, for tollgate or the echo. */
  const ratio = (server: "tollgate" | "echo", pick: (m: Measured) => number) => {
    const [during, before] = server === "tollgate" ? [(r: Round) => r.runaway, (r: Round) => r.idle] : [(r: Round) => r.echoRunaway, (r: Round) => r.echoIdle];
    return (median(rounds.map((r) => pick(during(r)))) / median(rounds.map((r) => pick(before(r))))).toFixed(2);
  };
  const statuses = new Map<number, number>();
  for (const r of rounds) for (const [status, n] of r.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n);
  const answered = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(", ");
  out.push(
    `\nrunaway queries answered: ${answered}; query processes per round: ${rounds.map((r) => r.processes).join(", ")}, ` +
      `using ${rounds.map((r) => r.processCores.toFixed(2)).join(", ")} cores while the runaways ran`,
    `\nverifyKey under the runaways over idle: p99 **${ratio("tollgate", (m) => m.p99Ms)}** (target ≤ 2), p50 ${ratio("tollgate", (m) => m.p50Ms)}, ` +
      `throughput ${ratio("tollgate", (m) => m.requestsPerSec)}; the echo's p99 ${ratio("echo", (m) => m.p99Ms)}, throughput ${ratio("echo", (m) => m.requestsPerSec)}\n`,
  );
  return out.join("\n");
}

await main();
