/**
 * ratelimits.limit against the peer users pick today: `rate-limiter-flexible` on a real Redis
 * (Debian's redis-server on loopback, through ioredis) behind a bare Bun.serve with the same request
 * and response shapes (bench/peer/rlflex-server.ts). In one run, with one wrk script (100,000
 * identifiers, limit 1,000,000 per minute, 50 connections): the bare Bun.serve echo, tollgate, and
 * the peer with Redis persistence off and with an append-only file fsynced every second (what comes
 * back after a restart, as tollgate's counts do). Reports requests/s, latency, errors, CPU time per
 * request from /proc (the peer's with its redis-server's added), the ratios to the echo (medians of
 * BENCH_ROUNDS rounds, default 3, the order turning each round), and an
 * accuracy check: 3 × limit concurrent requests on one identifier, how many succeed, every round.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { cpuMs, formatRow, ratelimitLua, startServer, startTollgate, stopOnSignal, TABLE_HEADER, tempDir, wrk, type WrkResult } from "./lib.ts";
import { startRedis } from "./peer/redis.ts";

export interface PeerBenchOptions {
  seconds?: number;
  warmupSeconds?: number;
  identifiers?: number;
  accuracyRounds?: number;
  /** Measured rounds per server; the table shows each figure's median (the machine is shared and noisy). */
  rounds?: number;
}

interface Target {
  name: string;
  url: string;
  token: string;
  serverPid: number;
  /** The peer's redis-server: its CPU belongs to the peer's cost. */
  storePid?: number;
}

export interface Measured extends WrkResult {
  name: string;
  /** Requests/s of every round, in order. */
  roundsPerSec: number[];
  serverCpuUsPerRequest: number;
  /** Server and its redis-server together (equal to the server's alone when there is none). */
  totalCpuUsPerRequest: number;
}

export interface Accuracy {
  name: string;
  limit: number;
  /** Successful answers per round, out of 3 × limit concurrent requests. */
  successes: number[];
}

export interface PeerBenchResult {
  rows: Measured[];
  accuracy: Accuracy[];
  markdown: string;
}

async function measure(target: Target, lua: string, seconds: number, warmupSeconds: number): Promise<Measured> {
  await wrk(target.url, lua, { seconds: warmupSeconds });
  const server0 = cpuMs(target.serverPid);
  const store0 = target.storePid ? cpuMs(target.storePid) : 0;
  const result = await wrk(target.url, lua, { seconds });
  const requests = result.requestsPerSec * seconds;
  const server = cpuMs(target.serverPid) - server0;
  const store = target.storePid ? cpuMs(target.storePid) - store0 : 0;
  return { ...result, name: target.name, roundsPerSec: [result.requestsPerSec], serverCpuUsPerRequest: (server * 1000) / requests, totalCpuUsPerRequest: ((server + store) * 1000) / requests };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Each figure's median over the rounds; non-2xx and socket errors summed. */
function combine(rounds: Measured[]): Measured {
  const m = (pick: (r: Measured) => number) => median(rounds.map(pick));
  return {
    name: rounds[0]!.name, roundsPerSec: rounds.map((r) => r.requestsPerSec),
    requests: rounds.reduce((a, r) => a + r.requests, 0), requestsPerSec: m((r) => r.requestsPerSec), p50Ms: m((r) => r.p50Ms), p99Ms: m((r) => r.p99Ms),
    non2xx: rounds.reduce((a, r) => a + r.non2xx, 0), errors: rounds.reduce((a, r) => a + r.errors, 0),
    serverCpuUsPerRequest: m((r) => r.serverCpuUsPerRequest), totalCpuUsPerRequest: m((r) => r.totalCpuUsPerRequest),
  };
}

/** `rounds` rounds over all targets, each round starting one target later, so drift on the machine hits all alike. */
async function measureAll(targets: Target[], lua: string, opts: { seconds: number; warmupSeconds: number; rounds: number }): Promise<Measured[]> {
  const perTarget: Measured[][] = targets.map(() => []);
  for (let round = 0; round < opts.rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = (i + round) % targets.length;
      perTarget[t]!.push(await measure(targets[t]!, lua, opts.seconds, round === 0 ? opts.warmupSeconds : 1));
    }
  }
  return perTarget.map(combine);
}

/** 3 × `limit` concurrent requests on a fresh identifier per round; the count that succeeded each round. */
async function accuracy(target: Target, rounds: number, limit = 100): Promise<Accuracy> {
  const successes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const body = JSON.stringify({ namespace: "accuracy", identifier: `round_${round}`, limit, duration: 600_000 });
    const answers = await Promise.all(Array.from({ length: 3 * limit }, () => fetch(`${target.url}/v2/ratelimits.limit`, {
      method: "POST", headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" }, body,
    }).then((r) => r.json() as Promise<{ data?: { success: boolean } }>)));
    successes.push(answers.filter((a) => a.data?.success === true).length);
  }
  return { name: target.name, limit, successes };
}

/** Starts every server; each one's stop goes on `stops` as soon as it runs, so a failure later still ends it. */
async function startTargets(rootKey: string, stops: Array<() => Promise<void>>): Promise<Target[]> {
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  stops.push(echo.stop);
  const dataDir = tempDir("tollgate-bench-rl-peer-");
  const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: rootKey });
  stops.push(async () => {
    await tollgate.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const targets: Target[] = [
    { name: "Bun.serve echo", url: echo.url, token: rootKey, serverPid: echo.pid },
    { name: "tollgate ratelimits.limit", url: tollgate.url, token: rootKey, serverPid: tollgate.pid },
  ];
  for (const persistence of ["none", "everysec"] as const) {
    const redis = await startRedis(persistence);
    stops.push(redis.stop);
    const peer = await startServer(["bun", join("bench", "peer", "rlflex-server.ts")], { PEER_REDIS_URL: redis.url, PEER_TOKEN: rootKey });
    stops.push(peer.stop);
    const label = persistence === "none" ? "no persistence" : "AOF, fsync every second";
    targets.push({ name: `rate-limiter-flexible + Redis (${label})`, url: peer.url, token: rootKey, serverPid: peer.pid, storePid: redis.pid });
  }
  return targets;
}

function report(rows: Measured[], checks: Accuracy[], seconds: number, identifiers: number, rounds: number): string {
  const echo = rows[0]!;
  const header = TABLE_HEADER.replace(" |\n", " | server CPU µs/req | with redis-server | req/s vs echo | CPU/req vs echo |\n") + " --- | --- | --- | --- |";
  const lines = rows.map((r) => `${formatRow(r.name, r)} ${r.serverCpuUsPerRequest.toFixed(1)} | ${r.totalCpuUsPerRequest === r.serverCpuUsPerRequest ? "–" : r.totalCpuUsPerRequest.toFixed(1)} | ${(r.requestsPerSec / echo.requestsPerSec).toFixed(2)} | ${(r.totalCpuUsPerRequest / echo.totalCpuUsPerRequest).toFixed(1)} |`);
  const accuracyLines = checks.map((c) => {
    const exact = c.successes.filter((n) => n === c.limit).length;
    return `- ${c.name}: successes per round ${[...new Set(c.successes)].join(", ")}; exactly the limit in ${exact} of ${c.successes.length} rounds`;
  });
  return [
    `### ratelimits.limit vs rate-limiter-flexible on Redis (${identifiers.toLocaleString("en")} identifiers, 50 connections, median of ${rounds} rounds of ${seconds} s)`,
    "",
    header,
    ...lines,
    "",
    `Requests/s per round: ${rows.map((r) => `${r.name} ${r.roundsPerSec.map((x) => x.toFixed(0)).join(" / ")}`).join("; ")}.`,
    "",
    `Accuracy: ${3 * (checks[0]?.limit ?? 100)} concurrent requests on one identifier, limit ${checks[0]?.limit ?? 100}, ${checks[0]?.successes.length ?? 0} rounds:`,
    "",
    ...accuracyLines,
    "",
    "The peer counts a fixed window of whole seconds per identifier in Redis, one atomic Lua script per request over one",
    "ioredis connection; tollgate counts a sliding window in process memory and writes it to SQLite in batches. Without",
    "persistence a Redis restart forgets every count; with the append-only file at most about a second is lost. The load",
    "generator, the server and redis-server share the machine's two cores, so CPU per request compares better than requests/s.",
    "",
  ].join("\n");
}

export async function run(opts: PeerBenchOptions = {}): Promise<PeerBenchResult> {
  const seconds = opts.seconds ?? 10;
  const identifiers = opts.identifiers ?? 100_000;
  const rootKey = `tg_bench_${"x".repeat(24)}`;
  const lua = ratelimitLua(rootKey, identifiers);
  const stops: Array<() => Promise<void>> = [];
  const forgetSignals = stopOnSignal(stops);
  try {
    const targets = await startTargets(rootKey, stops);
    const rows = await measureAll(targets, lua, { seconds, warmupSeconds: opts.warmupSeconds ?? 3, rounds: opts.rounds ?? 3 });
    const checks: Accuracy[] = [];
    for (const target of targets.slice(1)) checks.push(await accuracy(target, opts.accuracyRounds ?? 20));
    return { rows, accuracy: checks, markdown: report(rows, checks, seconds, identifiers, opts.rounds ?? 3) };
  } finally {
    forgetSignals();
    for (const stop of stops.reverse()) await stop();
  }
}

if (import.meta.main) {
  const result = await run({ seconds: Number(process.env.BENCH_SECONDS ?? 10), rounds: Number(process.env.BENCH_ROUNDS ?? 3) });
  console.log(result.markdown);
}
