/**
 * Throwaway PostgreSQL and Redis servers for the cluster tests: Debian's binaries started as child
 * processes on free loopback ports, each in a temporary directory that `stop()` removes. Never
 * daemonized: a daemon's parent exits, and nothing in a container reaps the orphan.
 * As root, PostgreSQL runs as the `postgres` account through setpriv, which execs (so the PID is
 * the server's own, and stop signals the server itself).
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

export interface TestServer {
  /** postgres://… or redis://…, on 127.0.0.1. */
  url: string;
  pid: number;
  /** Stops the server (fast shutdown), waits for it to exit and removes its directory. */
  stop(): Promise<void>;
}

const PG_ROOT = "/usr/lib/postgresql";
/** How long a server may take to answer after it is started. */
const READY_TIMEOUT_MS = 20_000;
/** For a beforeAll that starts a server: initdb, then the wait for it to answer (bun test's 5 s default is short on a loaded machine). */
export const SERVER_START_TIMEOUT_MS = READY_TIMEOUT_MS + 10_000;
const READY_POLL_MS = 50;

/** The bin directory of the newest PostgreSQL installed, or undefined. */
export function postgresBin(): string | undefined {
  if (!existsSync(PG_ROOT)) return undefined;
  const newest = readdirSync(PG_ROOT).filter((d) => /^\d+$/.test(d)).map(Number).sort((a, b) => b - a)[0];
  const bin = newest === undefined ? undefined : join(PG_ROOT, String(newest), "bin");
  return bin !== undefined && existsSync(join(bin, "initdb")) ? bin : undefined;
}

/** A port nobody listens on now (another process could take it before the server does; rare on loopback). */
function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

const isRoot = process.getuid?.() === 0;

function asPostgresUser(argv: string[]): string[] {
  return isRoot ? ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", ...argv] : argv;
}

/** Polls `ready` until it holds; throws when the process exited or the timeout passed (waiting on another process, not passing test time). */
async function waitUntil(ready: () => boolean, proc: Bun.Subprocess, what: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!ready()) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode} before it was ready`);
    if (Date.now() > deadline) throw new Error(`${what} was not ready after ${READY_TIMEOUT_MS} ms`);
    await Bun.sleep(READY_POLL_MS);
  }
}

function stopper(proc: Bun.Subprocess, signal: NodeJS.Signals, dir: string): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => (stopped ??= (async () => {
    if (proc.exitCode === null) proc.kill(signal);
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  })());
}

/** A server that can also be stopped and started again on its data and port, as in an outage. */
export interface RestartableServer extends TestServer {
  /** Stops the server (fast shutdown: sessions are terminated) and keeps its data; `pid` is stale until `resume`. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same data and port; resolves once it answers. */
  resume(): Promise<void>;
}

/**
 * A PostgreSQL server with one superuser `tollgate` (trust authentication on loopback) and its
 * default database `postgres`. Durability is off (fsync, full-page writes): the data is thrown away.
 */
export async function startPostgres(): Promise<RestartableServer> {
  const bin = postgresBin();
  if (bin === undefined) throw new Error(`PostgreSQL is not installed (apt-get install -y postgresql)`);
  const dir = mkdtempSync(join(tmpdir(), "tollgate-pg-"));
  if (isRoot) chownPostgres(dir);
  const data = join(dir, "data");
  const init = Bun.spawnSync(asPostgresUser([join(bin, "initdb"), "-D", data, "-U", "tollgate", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"]), { stdout: "ignore", stderr: "pipe" });
  if (init.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr.toString()}`);
  }
  const port = freePort();
  const launch = async (): Promise<Bun.Subprocess> => {
    const proc = Bun.spawn(asPostgresUser([
      join(bin, "postgres"), "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
      "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
    ]), { stdout: "ignore", stderr: "ignore" });
    try {
      await waitUntil(() => Bun.spawnSync([join(bin, "pg_isready"), "-h", "127.0.0.1", "-p", String(port), "-q"]).exitCode === 0, proc, "postgres");
    } catch (error) {
      await stopper(proc, "SIGINT", dir)();
      throw error;
    }
    return proc;
  };
  return restartable(`postgres://tollgate@127.0.0.1:${port}/postgres`, await launch(), launch, "SIGINT", dir);
}

function chownPostgres(dir: string): void {
  const uid = Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim());
  const gid = Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`no postgres account to run PostgreSQL as (running as ${userInfo().username})`);
  chownSync(dir, uid, gid);
}

/** A Redis server without persistence (no RDB, no AOF), on `port` when given (to start one again where a stopped one was). */
export async function startRedis(port = freePort()): Promise<RestartableServer> {
  const server = Bun.which("redis-server");
  if (server === null) throw new Error(`redis-server is not installed (apt-get install -y redis-server)`);
  const dir = mkdtempSync(join(tmpdir(), "tollgate-redis-"));
  const launch = async (): Promise<Bun.Subprocess> => {
    const proc = Bun.spawn([server, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], { stdout: "ignore", stderr: "ignore" });
    try {
      await waitUntil(() => Bun.spawnSync(["redis-cli", "-p", String(port), "ping"]).stdout.toString().trim() === "PONG", proc, "redis-server");
    } catch (error) {
      await stopper(proc, "SIGTERM", dir)();
      throw error;
    }
    return proc;
  };
  return restartable(`redis://127.0.0.1:${port}`, await launch(), launch, "SIGTERM", dir);
}

/** The server run by `proc`, stopped with `signal`; `resume` runs `launch` again; `stop` also removes `dir`. */
function restartable(url: string, first: Bun.Subprocess, launch: () => Promise<Bun.Subprocess>, signal: NodeJS.Signals, dir: string): RestartableServer {
  let proc = first;
  const halt = async () => {
    if (proc.exitCode === null) proc.kill(signal);
    await proc.exited;
  };
  let stopped: Promise<void> | undefined;
  const server: RestartableServer = {
    url,
    pid: proc.pid,
    stop: () => (stopped ??= halt().then(() => rmSync(dir, { recursive: true, force: true }))),
    halt,
    async resume() {
      // A process killed by a signal has no exit code: it is gone all the same.
      if (proc.exitCode === null && proc.signalCode === null) return;
      proc = await launch();
      server.pid = proc.pid;
    },
  };
  return server;
}
