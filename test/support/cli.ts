/**
 * The real CLI as a child process: `bun run src/main.ts <args>` (or a built binary, `program`)
 * against a temp data dir, port 0.
 * runCli() waits for the exit (bounded); startServe() waits for the `tollgate listening` log line,
 * reading stderr as it arrives, and stop() sends SIGTERM to the child's PID. Nothing here sleeps:
 * every wait is for an event, raced against a deadline.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { SERVE_ALLOCATOR_ENV } from "../../src/cli/allocator.ts";

/** The project root (where package.json and src/main.ts are). */
export const ROOT = resolve(import.meta.dir, "../..");

const RUN_TIMEOUT_MS = 15_000;
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;

/** A CLI table's rows (tab-separated cells), after checking that it opens with the header row `header`. */
export function tableRows(stdout: string, header: readonly string[]): string[][] {
  const [first, ...lines] = stdout.split("\n").filter(Boolean);
  if (first !== header.join("\t")) throw new Error(`expected the header row ${JSON.stringify(header.join("\t"))}, got ${JSON.stringify(first)}`);
  return lines.map((line) => line.split("\t"));
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export type TempDataDir = { dir: string; parent: string; cleanup(): void };

/** A fresh temp data dir (not created inside: tollgate creates it) and its removal. */
export function tempDataDir(): TempDataDir {
  const parent = mkdtempSync(join(tmpdir(), "tollgate-cli-"));
  return { dir: join(parent, "data"), parent, cleanup: () => rmSync(parent, { recursive: true, force: true }) };
}

/** The child's environment: ours without any TOLLGATE_* of the caller, then the data dir, port 0 and `env`. */
/** This process's environment without any TOLLGATE_* setting, so a child sees only the ones a test gives it. */
export function environWithoutSettings(): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("TOLLGATE_")) base[k] = v;
  return base;
}

function childEnv(dataDir: string, env: Record<string, string>): Record<string, string> {
  return { ...environWithoutSettings(), TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PORT: "0", ...env };
}

/** A TCP port free on 127.0.0.1 at the moment of asking, for a server a test starts later on purpose. */
export function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port ?? 0;
  probe.stop(true);
  return port;
}

/** The `name=value` entries of an environment as /proc/<pid>/environ holds it. */
export function environEntries(text: string): string[] {
  return text.split("\0").filter(Boolean);
}

/** The `name=value` entries of a running process's environment (Linux). */
export function environOf(pid: number): string[] {
  return environEntries(readFileSync(`/proc/${pid}/environ`, "utf8"));
}

/** SERVE_ALLOCATOR_ENV as `name=value` entries, as an environment that carries it holds them. */
export const SERVE_ALLOCATOR_ENTRIES: readonly string[] = Object.entries(SERVE_ALLOCATOR_ENV).map(([name, value]) => `${name}=${value}`);

/** How to run tollgate: the command before its arguments, and the working directory. */
export interface Program {
  command: string[];
  cwd: string;
}

/** The sources, run by Bun from the project root. */
export const SOURCE_PROGRAM: Program = { command: ["bun", "run", "src/main.ts"], cwd: ROOT };

export interface RunOptions {
  dataDir: string;
  env?: Record<string, string>;
  program?: Program;
}

function spawnTollgate(args: string[], opts: RunOptions): Subprocess<"ignore", "pipe", "pipe"> {
  const program = opts.program ?? SOURCE_PROGRAM;
  const { dataDir } = opts;
  const env = opts.env ?? {};
  return Bun.spawn([...program.command, ...args], {
    cwd: program.cwd,
    env: childEnv(dataDir, env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Rejects after `ms` with `message`; the timer is cleared when `p` settles. */
async function withDeadline<T>(p: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function killIfRunning(proc: Subprocess): void {
  if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid, "SIGKILL");
}

/** Runs one CLI command to completion (killed by PID if it outlives the deadline). */
export async function runCli(args: string[], opts: RunOptions): Promise<CliResult> {
  const proc = spawnTollgate(args, opts);
  try {
    const [stdout, stderr, code] = await withDeadline(
      Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]),
      RUN_TIMEOUT_MS,
      () => `tollgate ${args.join(" ")} did not exit within ${RUN_TIMEOUT_MS} ms`,
    );
    return { code, stdout, stderr };
  } finally {
    killIfRunning(proc);
  }
}

/** Collects a stream's text as it arrives; `waitFor` resolves on the first line that matches. */
class StreamText {
  text = "";
  private waiters: Array<{ test: (line: string) => boolean; resolve: (line: string) => void }> = [];
  readonly done: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = this.pump(stream);
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of stream) {
      const piece = decoder.decode(chunk, { stream: true });
      this.text += piece;
      partial += piece;
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) this.offer(line);
    }
    if (partial) this.offer(partial);
  }

  private offer(line: string): void {
    this.waiters = this.waiters.filter((w) => {
      if (!w.test(line)) return true;
      w.resolve(line);
      return false;
    });
  }

  waitFor(test: (line: string) => boolean): Promise<string> {
    const seen = this.text.split("\n").find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }
}

export interface Served {
  url: string;
  pid: number;
  /** Everything the child wrote so far. */
  stdout(): string;
  stderr(): string;
  /** POSTs JSON with `Authorization: Bearer <key>`. */
  post(path: string, body: unknown, key: string): Promise<{ status: number; body: any }>;
  /** SIGTERM to the child's PID; resolves with its exit code once it exited and its output is read. */
  stop(): Promise<number>;
  /** Sends `signal` to the child's PID without waiting. */
  signal(signal: "SIGTERM" | "SIGINT"): void;
  /** Resolves with the first stderr line that passes `test` (bounded, like the start). */
  stderrLine(test: (line: string) => boolean): Promise<string>;
  /** Resolves with the exit code once the child exited and its output is read (bounded). */
  exitCode(): Promise<number>;
  /** For finally/afterAll: SIGKILL by PID if it still runs. */
  kill(): void;
}

/** Starts `tollgate serve` and resolves once its `tollgate listening` line is on stderr. */
export async function startServe(opts: RunOptions & { startTimeoutMs?: number }): Promise<Served> {
  const startTimeoutMs = opts.startTimeoutMs ?? START_TIMEOUT_MS;
  const proc = spawnTollgate(["serve"], opts);
  const out = new StreamText(proc.stdout);
  const err = new StreamText(proc.stderr);
  const kill = () => killIfRunning(proc);
  const exitedEarly = proc.exited.then((code) => {
    throw new Error(`serve exited with ${code} before listening:\n${err.text}`);
  });
  exitedEarly.catch(() => {}); // only the race below cares; a later exit is not an error
  try {
    const line = await withDeadline(
      Promise.race([err.waitFor((l) => l.includes("tollgate listening")), exitedEarly]),
      startTimeoutMs,
      () => `serve did not log 'tollgate listening' within ${startTimeoutMs} ms:\n${err.text}`,
    );
    const url = (JSON.parse(line) as { url: string }).url;
    const signal = (name: "SIGTERM" | "SIGINT") => {
      if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid, name);
    };
    const exitCode = async () => {
      try {
        const [code] = await withDeadline(Promise.all([proc.exited, out.done, err.done]), STOP_TIMEOUT_MS,
          () => `serve did not exit within ${STOP_TIMEOUT_MS} ms:\n${err.text}`);
        return code;
      } finally {
        kill();
      }
    };
    return {
      url,
      pid: proc.pid,
      stdout: () => out.text,
      stderr: () => err.text,
      async post(path, body, key) {
        const res = await fetch(url + path, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Leave non-JSON bodies as text so a failing assertion shows them.
        }
        return { status: res.status, body: parsed };
      },
      signal,
      stderrLine(test) {
        return withDeadline(err.waitFor(test), startTimeoutMs, () => `no such line on stderr within ${startTimeoutMs} ms:\n${err.text}`);
      },
      exitCode,
      stop() {
        signal("SIGTERM");
        return exitCode();
      },
      kill,
    };
  } catch (e) {
    kill();
    throw e;
  }
}

/** The bootstrap root key a data dir holds once a command or `serve` opened it first. */
export function bootstrapKeyOf(dataDir: string): string {
  return readFileSync(join(dataDir, "bootstrap-root-key"), "utf8").trim();
}

/** An audit entry as audit.listLogs returns it, reduced to what the CLI tests compare. */
export interface AuditSeen {
  event: string;
  actor: { type: string; id: string; name?: string };
  resourceIds: string[];
}

/** The audit entries of `served`'s workspace that name `resourceId`, newest first (one page). */
export async function auditEntriesNaming(served: Served, rootKey: string, resourceId: string): Promise<AuditSeen[]> {
  const r = await served.post("/v2/audit.listLogs", { resourceId, limit: 100 }, rootKey);
  if (r.status !== 200) throw new Error(`audit.listLogs answered ${r.status}: ${JSON.stringify(r.body)}`);
  return (r.body.data as Array<{ event: string; actor: AuditSeen["actor"]; resources: Array<{ id: string }> }>)
    .map((e) => ({ event: e.event, actor: e.actor, resourceIds: e.resources.map((res) => res.id) }));
}
