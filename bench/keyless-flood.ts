/**
 * A keyless flood against one tollgate on 127.0.0.1, while a legitimate client verifies keys:
 * KEYLESS_CONNECTIONS connections at once that each declare a 60,000-byte keys.verifyKey body with
 * no, a malformed or an unknown Authorization header and send one byte of it every 2 s (each is
 * reopened a second after the service answered or closed it), plus wrk's FLOOD_CONNECTIONS
 * connections sending whole requests with a malformed header as fast as they can. Reports the
 * legitimate client's failure rate (target ≤ 1%) and latency, and the slowest time from a keyless
 * connection's head to its answer or close (target ≤ 2 s). Bounded: FLOOD_SECONDS (default 20)
 * and every child ended by its PID. The connections need file descriptors: a soft limit
 * (`ulimit -n`) below what they take stops the run at once, saying what to raise it to.
 */
import { rmSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { median, startTollgate, stopOnSignal, tempDir, wrk } from "./lib.ts";

const SECONDS = Number(process.env.FLOOD_SECONDS ?? process.env.BENCH_SECONDS ?? "20");
const KEYLESS_CONNECTIONS = Number(process.env.KEYLESS_CONNECTIONS ?? "600");
const FLOOD_CONNECTIONS = Number(process.env.FLOOD_CONNECTIONS ?? "200");
const LEGIT_CLIENTS = 4;
const DECLARED_BYTES = 60_000;
const TRICKLE_MS = 2000;

/** The soft limit of open files, as a shell started from here (with this process's limits) reads it. */
function fileLimit(): number {
  const soft = Number(Bun.spawnSync(["sh", "-c", "ulimit -n"]).stdout.toString().trim());
  return Number.isFinite(soft) ? soft : Number.NaN;
}

const AUTHORIZATIONS = ["", "authorization: Basic dXNlcjpwYXNz\r\n", "authorization: Bearer tg_root_notAKeyAtAll0123456789\r\n"];

interface KeylessStats {
  opened: number;
  answered: number;
  closedUnanswered: number;
  slowestMs: number;
  times: number[];
}

/** One keyless connection: head and one byte, a byte every TRICKLE_MS, until answered or closed; the time from the head to that. */
function keylessOnce(port: number, authorization: string): Promise<{ ms: number; answered: boolean }> {
  let started = performance.now();
  return new Promise((resolve) => {
    let answered = false;
    let timer: ReturnType<typeof setInterval> | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(timer);
      resolve({ ms: performance.now() - started, answered });
    };
    Bun.connect({
      hostname: "127.0.0.1", port,
      socket: {
        open(socket) {
          started = performance.now();
          socket.write(`POST /v2/keys.verifyKey HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${authorization}content-type: application/json\r\ncontent-length: ${DECLARED_BYTES}\r\n\r\n{`);
          timer = setInterval(() => socket.write(" "), TRICKLE_MS);
        },
        data(socket) {
          answered = true;
          finish();
          socket.end();
        },
        close: finish,
        error: finish,
        connectError: finish,
      },
    }).catch(finish);
  });
}

async function keylessFlood(port: number, until: number, stats: KeylessStats): Promise<void> {
  await Promise.all(Array.from({ length: KEYLESS_CONNECTIONS }, async (_, i) => {
    while (performance.now() < until) {
      stats.opened++;
      const { ms, answered } = await keylessOnce(port, AUTHORIZATIONS[i % AUTHORIZATIONS.length]!);
      if (answered) stats.answered++;
      else stats.closedUnanswered++;
      stats.slowestMs = Math.max(stats.slowestMs, ms);
      stats.times.push(ms);
      await Bun.sleep(1000);
    }
  }));
}

/** The legitimate client: LEGIT_CLIENTS closed loops verifying a valid key; failures are anything but 200 VALID. */
async function legitimate(url: string, rootKey: string, key: string, until: number): Promise<{ ok: number; failed: number; ms: number[]; statuses: Record<string, number> }> {
  const out = { ok: 0, failed: 0, ms: [] as number[], statuses: {} as Record<string, number> };
  const body = JSON.stringify({ key });
  await Promise.all(Array.from({ length: LEGIT_CLIENTS }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const res = await fetch(`${url}/v2/keys.verifyKey`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body })
        .then(async (r) => ({ status: String(r.status), valid: ((await r.json()) as { data?: { valid?: boolean } }).data?.valid === true }), (e: unknown) => ({ status: `error ${(e as Error).name}`, valid: false }));
      out.ms.push(performance.now() - started);
      out.statuses[res.status] = (out.statuses[res.status] ?? 0) + 1;
      if (res.status === "200" && res.valid) out.ok++;
      else out.failed++;
    }
  }));
  return out;
}

const MALFORMED_LUA = `wrk.method = "POST"
wrk.body = '{"key":"x"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer"
`;

async function main(): Promise<void> {
  const limit = fileLimit();
  const needed = KEYLESS_CONNECTIONS + FLOOD_CONNECTIONS + 200;
  if (limit < needed) throw new Error(`ulimit -n is ${limit}; this benchmark needs ${needed} file descriptors: raise it (ulimit -n ${needed * 2}) and run again`);
  const dataDir = tempDir("tollgate-bench-flood-");
  const rootKey = `tg_bench_${"f".repeat(24)}`;
  const server = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: rootKey });
  const unhook = stopOnSignal([server.stop]);
  try {
    const post = async (path: string, body: unknown) => ((await (await fetch(server.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify(body) })).json()) as { data: any }).data;
    const { apiId } = await post("/v2/apis.createApi", { name: "flood" });
    const { key } = await post("/v2/keys.createKey", { apiId });
    const port = Number(new URL(server.url).port);
    const until = performance.now() + SECONDS * 1000;
    const keyless: KeylessStats = { opened: 0, answered: 0, closedUnanswered: 0, slowestMs: 0, times: [] };
    const [legit, , flood] = await Promise.all([
      legitimate(server.url, rootKey, key, until),
      keylessFlood(port, until, keyless),
      wrk(`${server.url}/v2/keys.verifyKey`, MALFORMED_LUA, { seconds: SECONDS, connections: FLOOD_CONNECTIONS }),
    ]);
    const total = legit.ok + legit.failed;
    const sorted = [...legit.ms].sort((a, b) => a - b);
    const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? Number.NaN;
    console.log([
      `### keyless flood (${new Date().toISOString().slice(0, 10)}, ${SECONDS} s, ulimit -n ${limit}, load average ${loadavg().map((x) => x.toFixed(1)).join(" ")} on ${cpus().length} cores)\n`,
      `${KEYLESS_CONNECTIONS} keyless slow-body connections at once (60,000 bytes declared, a byte every 2 s; none, malformed and unknown Authorization in turn), `
        + `${FLOOD_CONNECTIONS} wrk connections of malformed headers, ${LEGIT_CLIENTS} legitimate clients verifying a valid key; all on 127.0.0.1, default bounds.\n`,
      "| measure | value |",
      "| --- | --- |",
      `| legitimate verifications | ${total} |`,
      `| legitimate failures | ${legit.failed} (${((100 * legit.failed) / Math.max(1, total)).toFixed(2)}%) ${JSON.stringify(legit.statuses)} |`,
      `| legitimate latency p50 / p99 ms | ${median(legit.ms).toFixed(2)} / ${p99.toFixed(2)} |`,
      `| keyless connections opened | ${keyless.opened} (answered ${keyless.answered}, closed unanswered ${keyless.closedUnanswered}) |`,
      `| keyless: head to answer or close, median / slowest ms | ${median(keyless.times).toFixed(1)} / ${keyless.slowestMs.toFixed(1)} |`,
      `| malformed-header flood (wrk) | ${flood.requestsPerSec.toFixed(0)} requests/s, ${flood.non2xx} non-2xx, ${flood.errors} socket errors |`,
    ].join("\n"));
  } finally {
    unhook();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
