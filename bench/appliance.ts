/**
 * The appliance as an operator meets it: the size of each binary in dist/, the time from exec to
 * the first answered request (empty data dir, so it includes migrations and the bootstrap, and a
 * second start on the existing data dir), and resident memory when idle. Runs the x64 binary from
 * an empty directory; builds it first when dist/ is stale. Prints a Markdown section for
 * BENCHMARKS.md. Every child is ended by its PID. Usage: bun run bench/appliance.ts [runs]
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaryPath, build, TARGETS } from "../build.ts";

const RUNS = Number(process.argv[2] ?? 5);
const IDLE_MS = 3000;

interface Start {
  firstAnswerMs: number;
  pid: number;
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
}

/** Spawns `binary serve` in `cwd` and times exec → the first 200 from /v2/liveness. */
async function start(binary: string, cwd: string): Promise<Start> {
  const started = performance.now();
  const proc = Bun.spawn([binary, "serve"], {
    cwd, stdout: "ignore", stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TOLLGATE_DATA_DIR: join(cwd, "data"), TOLLGATE_PORT: "0" },
  });
  const url = await listeningUrl(proc.stderr);
  const res = await fetch(`${url}/v2/liveness`);
  if (res.status !== 200) throw new Error(`liveness answered ${res.status}`);
  await res.arrayBuffer();
  return { firstAnswerMs: performance.now() - started, pid: proc.pid, url, proc };
}

async function listeningUrl(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    const m = /"msg":"tollgate listening","url":"([^"]+)"/.exec(text);
    if (m?.[1]) return m[1];
  }
  throw new Error(`serve exited before listening:\n${text}`);
}

async function stop(s: Start): Promise<void> {
  process.kill(s.pid, "SIGTERM");
  await s.proc.exited;
}

function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  await build(TARGETS);
  const sizes = TARGETS.filter((t) => existsSync(binaryPath(t))).map((t) => `| tollgate-linux-${t} | ${(statSync(binaryPath(t)).size / 1024 / 1024).toFixed(1)} MiB |`);
  const first: number[] = [];
  const again: number[] = [];
  let idle = 0;
  for (let i = 0; i < RUNS; i++) {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-appliance-"));
    const binary = join(dir, "tollgate");
    copyFileSync(binaryPath("x64"), binary);
    try {
      const fresh = await start(binary, dir);
      first.push(fresh.firstAnswerMs);
      await stop(fresh);
      const warm = await start(binary, dir);
      again.push(warm.firstAnswerMs);
      if (i === 0) {
        // Idle means idle: let start-up work and the first flush intervals pass before reading.
        await Bun.sleep(IDLE_MS);
        idle = rssMiB(warm.pid);
      }
      await stop(warm);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`### Appliance (x64 binary, ${RUNS} runs, medians)\n`);
  console.log("| binary | size |\n| --- | --- |");
  console.log(sizes.join("\n"));
  console.log("\n| measure | value |\n| --- | --- |");
  console.log(`| exec → first answered request, empty data dir (migrations + bootstrap) | ${median(first).toFixed(0)} ms |`);
  console.log(`| exec → first answered request, existing data dir | ${median(again).toFixed(0)} ms |`);
  console.log(`| idle resident memory (${IDLE_MS / 1000} s after start) | ${idle.toFixed(1)} MiB |`);
}

await main();
