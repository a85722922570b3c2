/**
 * The appliance as an operator meets it, against the reference (the bare Bun.serve echo of
 * bench/echo.ts, compiled the same way): the size of each executable, the time from exec to the
 * first answered request (tollgate on an empty data dir, so with migrations and the bootstrap, and
 * again on the existing one), and resident memory when idle. Each executable runs alone from an
 * empty directory; runs alternate between tollgate and the reference. Builds dist/ first when
 * stale. Every child is ended by its PID. Usage: bun run bench/appliance.ts [runs]
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaryPath, build, TARGETS } from "../build.ts";

const RUNS = Number(process.argv[2] ?? 5);
const IDLE_MS = 3000;

interface Started {
  firstAnswerMs: number;
  pid: number;
  proc: ReturnType<typeof Bun.spawn>;
}

/** Spawns `command` in `cwd` and times exec → the first 200 from `path`, the URL taken from its `"url"` log line. */
async function start(command: string[], cwd: string, path: string): Promise<Started> {
  const started = performance.now();
  const proc = Bun.spawn(command, {
    cwd, stdout: "pipe", stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TOLLGATE_DATA_DIR: join(cwd, "data"), TOLLGATE_PORT: "0" },
  });
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${command[0]} logged no URL within 30 s`)), 30_000).unref());
  const url = await Promise.race([listeningUrl(proc.stdout), listeningUrl(proc.stderr), timeout]).catch((e) => {
    process.kill(proc.pid, "SIGKILL");
    throw e;
  });
  const res = await fetch(url + path);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  await res.arrayBuffer();
  return { firstAnswerMs: performance.now() - started, pid: proc.pid, proc };
}

async function listeningUrl(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    const m = /"msg":"[^"]*listening","url":"([^"]+)"/.exec(text);
    if (m?.[1]) return m[1];
  }
  return new Promise(() => {}); // the other stream has it
}

async function stop(s: Started): Promise<void> {
  process.kill(s.pid, "SIGTERM");
  await s.proc.exited;
}

function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

/** Runs `binary` alone from a fresh empty directory; `measure` gets the directory. */
async function inEmptyDir<T>(binary: string, measure: (program: string, dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-appliance-"));
  const program = join(dir, "program");
  copyFileSync(binary, program);
  try {
    return await measure(program, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** bench/echo.ts compiled like tollgate (minified, for this machine), into a temp dir. */
async function compileEcho(): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), "tollgate-echo-")), "echo");
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "echo.ts")], minify: true, bytecode: true, format: "esm",
    compile: { executablePath: process.execPath, outfile, autoloadDotenv: false, autoloadBunfig: false },
  });
  if (!result.success) throw new AggregateError(result.logs, "could not compile bench/echo.ts");
  return outfile;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mib = (file: string) => statSync(file).size / 1024 / 1024;

async function main(): Promise<void> {
  await build(TARGETS);
  const tollgate = binaryPath("x64");
  const echo = await compileEcho();
  const fresh: number[] = [];
  const again: number[] = [];
  const echoStart: number[] = [];
  const idle = { tollgate: [] as number[], echo: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    await inEmptyDir(tollgate, async (program, dir) => {
      const first = await start([program, "serve"], dir, "/v2/liveness");
      fresh.push(first.firstAnswerMs);
      await stop(first);
      const second = await start([program, "serve"], dir, "/v2/liveness");
      again.push(second.firstAnswerMs);
      await Bun.sleep(IDLE_MS);
      idle.tollgate.push(rssMiB(second.pid));
      await stop(second);
    });
    await inEmptyDir(echo, async (program, dir) => {
      const s = await start([program], dir, "/");
      echoStart.push(s.firstAnswerMs);
      await Bun.sleep(IDLE_MS);
      idle.echo.push(rssMiB(s.pid));
      await stop(s);
    });
  }
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log(`### Appliance (x64, ${RUNS} runs, medians; reference: bench/echo.ts compiled the same way)\n`);
  console.log("| executable | size |\n| --- | --- |");
  for (const t of TARGETS) console.log(`| tollgate-linux-${t} | ${mib(binaryPath(t)).toFixed(1)} MiB |`);
  console.log(`| echo (reference, x64) | ${mib(echo).toFixed(1)} MiB |`);
  console.log("\n| measure | tollgate | echo | ratio |\n| --- | --- | --- | --- |");
  console.log(`| exec → first answered request, empty data dir (migrations + bootstrap) | ${median(fresh).toFixed(0)} ms | ${median(echoStart).toFixed(0)} ms | ${ratio(median(fresh), median(echoStart))} |`);
  console.log(`| exec → first answered request, existing data dir | ${median(again).toFixed(0)} ms | ${median(echoStart).toFixed(0)} ms | ${ratio(median(again), median(echoStart))} |`);
  console.log(`| idle resident memory (${IDLE_MS / 1000} s after start) | ${median(idle.tollgate).toFixed(1)} MiB | ${median(idle.echo).toFixed(1)} MiB | ${ratio(median(idle.tollgate), median(idle.echo))} |`);
  rmSync(join(echo, ".."), { recursive: true, force: true });
}

await main();
