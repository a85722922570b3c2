/**
 * Shared pieces of the benchmarks: start a server as a child process and wait for its URL, run wrk
 * against it, and parse wrk's report. Every child is ended by its PID when the benchmark ends.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SERVE_ALLOCATOR_ENV } from "../src/cli/allocator.ts";

export const ROOT = join(import.meta.dir, "..");

export interface Child {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (benchmarks only: a race here just fails the run). */
export function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port ?? 0;
  probe.stop(true);
  return port;
}

/** Starts `tollgate serve` on a free port with `env` and waits until liveness answers. */
export async function startTollgate(env: Record<string, string>, timeoutMs = 30_000): Promise<Child> {
  const port = freePort();
  const proc = Bun.spawn(["bun", "run", join("src", "main.ts"), "serve"], {
    cwd: ROOT, env: { ...process.env, TOLLGATE_LOG_LEVEL: "warn", ...env, TOLLGATE_PORT: String(port) }, stdout: "ignore", stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const up = await fetch(`${url}/v2/liveness`).then((r) => r.ok, () => false);
    if (up) return { url, pid: proc.pid, stop: async () => { proc.kill("SIGTERM"); await proc.exited; } };
    if (proc.exitCode !== null) break;
    await Bun.sleep(50);
  }
  proc.kill("SIGKILL");
  throw new Error(`tollgate did not answer on ${url} within ${timeoutMs} ms`);
}

/**
 * Spawns `cmd` and resolves with the `url` of the first JSON log line that has one (stdout or
 * stderr). It runs with the allocator setting `tollgate serve` gives itself (src/cli/allocator.ts),
 * so that the references are measured under the same runtime settings as tollgate.
 */
export async function startServer(cmd: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Child> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...SERVE_ALLOCATOR_ENV, ...env }, stdout: "pipe", stderr: "pipe" });
  const url = await Promise.race([
    firstUrl(proc.stdout),
    firstUrl(proc.stderr),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${cmd.join(" ")} did not start in ${timeoutMs} ms`)), timeoutMs)),
  ]).catch((e) => {
    proc.kill("SIGKILL");
    throw e;
  });
  return {
    url,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

async function firstUrl(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk);
    for (const line of buffered.split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const parsed = JSON.parse(line) as { url?: string };
        if (parsed.url) return parsed.url;
      } catch {
        // A partial line; wait for more.
      }
    }
  }
  return new Promise(() => {});
}

export interface WrkResult {
  /** Responses received during the run. */
  requests: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

/** Runs wrk with a Lua script against `url` (50 connections, 1 thread, `seconds` long). */
export async function wrk(url: string, lua: string, opts: { seconds?: number; connections?: number } = {}): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-bench-"));
  const script = join(dir, "script.lua");
  writeFileSync(script, lua);
  const args = ["wrk", "-t1", `-c${opts.connections ?? 50}`, `-d${opts.seconds ?? 10}s`, "--latency", "-s", script, url];
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${await new Response(proc.stderr).text()}`);
  return parseWrk(out);
}

function toMs(value: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(value.trim());
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : n;
}

export function parseWrk(out: string): WrkResult {
  const requests = /(\d+) requests in /.exec(out)?.[1];
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1];
  const p50 = /^\s+50%\s+(\S+)/m.exec(out)?.[1];
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1];
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  const errs = /Socket errors:.*?connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: Number(requests ?? Number.NaN),
    requestsPerSec: Number(rps ?? Number.NaN),
    p50Ms: toMs(p50 ?? ""),
    p99Ms: toMs(p99 ?? ""),
    non2xx: Number(non2xx ?? 0),
    errors: errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

/** One line of a comparison table. */
export function formatRow(name: string, r: WrkResult): string {
  return `| ${name} | ${r.requestsPerSec.toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.non2xx} | ${r.errors} |`;
}

export const TABLE_HEADER = "| server | requests/s | p50 ms | p99 ms | non-2xx | socket errors |\n| --- | --- | --- | --- | --- | --- |";

/** A Lua script for wrk that POSTs `bodies` (JSON strings) in random order with a bearer token. */
export function postRandomBodiesLua(path: string, token: string, bodies: string[]): string {
  const list = bodies.map((b) => `[==[${b}]==]`).join(",\n");
  return `local bodies = {\n${list}\n}
wrk.method = "POST"
wrk.path = "${path}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${token}"
math.randomseed(42)
request = function()
  return wrk.format(nil, nil, nil, bodies[math.random(#bodies)])
end
`;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * CPU time of process `pid` (user + system, all threads) in ms, from /proc (Linux; NaN elsewhere);
 * with `thread`, of that thread only (the main thread's id is the process id).
 */
export function cpuMs(pid: number, thread?: number): number {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, "utf8");
    // The fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in 1/100 s
  } catch {
    return Number.NaN;
  }
}

export type Measured = WrkResult & { cpuUsPerRequest: number };

/** One wrk run against `server`, with the server's CPU time per request over the run. */
export async function measure(server: Pick<Child, "url" | "pid">, lua: string, seconds: number): Promise<Measured> {
  const before = cpuMs(server.pid);
  const result = await wrk(server.url, lua, { seconds });
  const cpuUsPerRequest = ((cpuMs(server.pid) - before) * 1000) / (result.requestsPerSec * seconds);
  return { ...result, cpuUsPerRequest };
}

export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The median of `pick` over a server's rounds over its median over the reference's rounds. */
export const medianRatio = (server: readonly Measured[], reference: readonly Measured[], pick: (m: Measured) => number): number =>
  median(server.map(pick)) / median(reference.map(pick));

export const MEASURED_HEADER = "| server | requests/s | p50 ms | p99 ms | non-2xx | socket errors | server CPU µs/request |\n| --- | --- | --- | --- | --- | --- | --- |";

export function formatMeasured(name: string, r: Measured): string {
  return `${formatRow(name, r)} ${r.cpuUsPerRequest.toFixed(1)} |`;
}

/**
 * The reference and a server under the same wrk script: a warm-up of each, then `rounds` rounds
 * alternating which goes first (so drift hits both alike). Returns every round of each.
 */
export async function compareWithEcho(echo: Child, server: Child, lua: string, opts: { seconds: number; rounds: number; warmupSeconds?: number }): Promise<{ echo: Measured[]; server: Measured[] }> {
  await wrk(echo.url, lua, { seconds: 2 });
  await wrk(server.url, lua, { seconds: opts.warmupSeconds ?? 3 });
  const out = { echo: [] as Measured[], server: [] as Measured[] };
  for (let i = 0; i < opts.rounds; i++) {
    const order = i % 2 === 0 ? (["echo", "server"] as const) : (["server", "echo"] as const);
    for (const which of order) out[which].push(await measure(which === "echo" ? echo : server, lua, opts.seconds));
  }
  return out;
}

/** Resident memory of process `pid` in KiB from /proc/<pid>/status: all of it, anonymous and file-backed. */
export function residentKiB(pid: number): { rss: number; anon: number; file: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: field("VmRSS"), anon: field("RssAnon"), file: field("RssFile") };
  } catch {
    return { rss: Number.NaN, anon: Number.NaN, file: Number.NaN };
  }
}

/** The processes whose parent is `pid` right now, from /proc (Linux; none elsewhere). */
export function childProcesses(pid: number): number[] {
  const all = (() => {
    try {
      return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
    } catch {
      return [];
    }
  })();
  return all.filter((child) => {
    try {
      const stat = readFileSync(`/proc/${child}/stat`, "utf8");
      // The fields after the command name, which is in parentheses and may contain spaces: state, ppid.
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
    } catch {
      return false;
    }
  });
}

/** A wrk script for `/v2/ratelimits.limit` over `identifiers` random identifiers (namespace "bench", limit 1,000,000 per minute). */
export function ratelimitLua(rootKey: string, identifiers = 100_000): string {
  return `wrk.method = "POST"
wrk.path = "/v2/ratelimits.limit"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${rootKey}"
math.randomseed(7)
request = function()
  local body = '{"namespace":"bench","identifier":"user_' .. math.random(${identifiers}) .. '","limit":1000000,"duration":60000}'
  return wrk.format(nil, nil, nil, body)
end
`;
}

/**
 * Runs `stops` (last started, first stopped) if the benchmark itself is told to end by SIGINT or
 * SIGTERM, so no child outlives it; returns the function that takes the handler away again.
 */
export function stopOnSignal(stops: Array<() => Promise<void>>): () => void {
  const handler = async (signal: NodeJS.Signals) => {
    for (const stop of [...stops].reverse()) await stop().catch(() => {});
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", handler);
  process.once("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/**
 * A meta of many small records (`head`'s fields, then `items`) whose JSON is just under `bytes`:
 * the most values for a parse or a serialisation to walk, as a large real-world meta holds.
 */
export function recordsMeta(bytes: number, head: Record<string, unknown> = { plan: "enterprise" }): Record<string, unknown> {
  const items: unknown[] = [];
  const meta = { ...head, items };
  let size = JSON.stringify(meta).length;
  for (let i = 0; ; i++) {
    const item = { id: i, name: `user-${i}`, tags: ["a", "b"], score: i * 1.5, active: i % 2 === 0 };
    const added = JSON.stringify(item).length + 1;
    if (size + added > bytes) return meta;
    items.push(item);
    size += added;
  }
}
