/**
 * Latency at light load: p50 and p99 of keys.verifyKey and ratelimits.limit with one and with four
 * connections (wrk, closed loop: each connection sends its next request when the answer arrives, so
 * the server is never saturated), against the bare Bun.serve echo under the same script in the same
 * run. verifyKey runs with the verification event pipeline on (the default) and off, to show what
 * recording adds to the tail. Target (issue 25): verifyKey's p99 within 2 × the echo's at both.
 * BENCH_SECONDS (default 5) per round, BENCH_ROUNDS (default 3) rounds alternating which server
 * goes first; the medians are reported.
 */
import { join } from "node:path";
import { median, postRandomBodiesLua, ratelimitLua, startServer, startTollgate, stopOnSignal, tempDir, wrk, type Child, type WrkResult } from "./lib.ts";
import { seedKeys } from "./seed.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const KEYS = 1_000;
const CONNECTIONS = [1, 4] as const;

interface Case {
  name: string;
  analytics: "on" | "off";
  lua: string;
}

interface Row {
  name: string;
  connections: number;
  server: WrkResult[];
  echo: WrkResult[];
}

/** `rounds` runs of each, alternating which goes first, after a short warm-up of both. */
async function alternate(echo: Child, server: Child, lua: string, connections: number): Promise<{ echo: WrkResult[]; server: WrkResult[] }> {
  await wrk(echo.url, lua, { seconds: 2, connections });
  await wrk(server.url, lua, { seconds: 2, connections });
  const out = { echo: [] as WrkResult[], server: [] as WrkResult[] };
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? (["echo", "server"] as const) : (["server", "echo"] as const);
    for (const which of order) out[which].push(await wrk((which === "echo" ? echo : server).url, lua, { seconds: SECONDS, connections }));
  }
  return out;
}

function format(row: Row): string {
  const m = (xs: WrkResult[], pick: (r: WrkResult) => number) => median(xs.map(pick));
  const p50 = m(row.server, (r) => r.p50Ms);
  const p99 = m(row.server, (r) => r.p99Ms);
  const echoP50 = m(row.echo, (r) => r.p50Ms);
  const echoP99 = m(row.echo, (r) => r.p99Ms);
  const errors = row.server.reduce((n, r) => n + r.non2xx + r.errors, 0);
  return `| ${row.name} | ${row.connections} | ${p50.toFixed(3)} | ${p99.toFixed(3)} | ${echoP50.toFixed(3)} | ${echoP99.toFixed(3)} | ${(p99 / echoP99).toFixed(2)} | ${m(row.server, (r) => r.requestsPerSec).toFixed(0)} | ${errors} |`;
}

async function main(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-latency-");
  const { rootKey, keys } = seedKeys(dataDir, KEYS, {});
  const verifyLua = postRandomBodiesLua("/v2/keys.verifyKey", rootKey, keys.map((key) => JSON.stringify({ key })));
  const cases: Case[] = [
    { name: "keys.verifyKey", analytics: "on", lua: verifyLua },
    { name: "keys.verifyKey, recording off", analytics: "off", lua: verifyLua },
    { name: "ratelimits.limit", analytics: "on", lua: ratelimitLua(rootKey, 1_000) },
  ];
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const stops: Array<() => Promise<void>> = [() => echo.stop()];
  const release = stopOnSignal(stops);
  const rows: Row[] = [];
  try {
    for (const c of cases) {
      const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ANALYTICS: c.analytics });
      stops.push(() => tollgate.stop());
      try {
        for (const connections of CONNECTIONS) {
          const r = await alternate(echo, tollgate, c.lua, connections);
          rows.push({ name: c.name, connections, ...r });
        }
      } finally {
        await tollgate.stop();
        stops.pop();
      }
    }
  } finally {
    await echo.stop();
    release();
  }
  console.log([
    `Closed loop (wrk, one thread), ${ROUNDS} rounds of ${SECONDS} s each, medians; ${KEYS} keys, each verified at random.`,
    "",
    "| route | connections | p50 ms | p99 ms | echo p50 ms | echo p99 ms | p99 / echo p99 | requests/s | non-2xx + errors |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(format),
  ].join("\n"));
}

await main();
