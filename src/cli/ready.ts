/**
 * `tollgate ready [--wait <duration>] [--pid <pid>]`: asks the running service's GET /v2/readiness,
 * at the address the configuration makes it listen on. The systemd unit runs it as ExecStartPost, so
 * that `systemctl start` returns once the service answers ready and fails when it never does. The
 * retry interval is real time: the command waits on another process, not on the service's Clock.
 */
import type { Config } from "../config.ts";
import type { Clock } from "../lib/clock.ts";
import { DurationError, parseDurationMs } from "../lib/duration.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const READY_HELP = `tollgate ready [--wait <duration>] [--pid <pid>]
  Asks the service at TOLLGATE_HOST:TOLLGATE_PORT whether it is ready (GET /v2/readiness: both
  databases writable, migrations current; on a cluster node, which has no database file, PostgreSQL
  answering instead, and Redis under TOLLGATE_REDIS_UNREACHABLE=closed). Exit 0 when it is; 1 otherwise, with the reason on
  stderr. --wait 60s asks again until it is ready or the time is up; --pid stops waiting as soon
  as that process (the service's, $MAINPID under systemd) has ended.`;

/** Between two questions while waiting. */
const RETRY_INTERVAL_MS = 200;
/**
 * One question's bound: a service that accepts the connection but never answers is not ready. The
 * last question may end this much after --wait's time; the unit's TimeoutStartSec leaves room for it.
 */
export const READY_REQUEST_TIMEOUT_MS = 5_000;

/** Where the service answers: a wildcard listen address is reached over loopback. */
export function readinessUrl(config: Pick<Config, "host" | "port">): string {
  const host = config.host === "0.0.0.0" ? "127.0.0.1" : config.host === "::" ? "::1" : config.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}/v2/readiness`;
}

/** Why the service at `url` is not ready, or undefined when it answers ready. */
async function notReady(url: string, timeoutMs: number): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    if ((error as Error).name === "TimeoutError") return `no answer from ${url} within ${timeoutMs} ms`;
    return `nothing answers on ${url}`;
  }
  if (res.status === 200) {
    await res.body?.cancel();
    return undefined;
  }
  const text = await res.text().catch(() => "");
  let detail: unknown;
  try {
    detail = (JSON.parse(text) as { error?: { detail?: unknown } }).error?.detail;
  } catch {
    // Not tollgate's error envelope: another program on the port; the status says enough.
  }
  return typeof detail === "string" && detail !== "" ? detail : `${url} answered ${res.status}`;
}

/** False once process `pid` has ended; a process of another user (EPERM) still runs. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function servicePid(values: Record<string, unknown>): number | undefined {
  if (values.pid === undefined) return undefined;
  const pid = Number(values.pid);
  if (!/^\d+$/.test(String(values.pid)) || !Number.isSafeInteger(pid) || pid < 1) throw new UsageError(`--pid: '${values.pid}' is not a process id`);
  return pid;
}

function waitMs(values: Record<string, unknown>): number {
  const wait = values.wait;
  if (wait === undefined) return 0;
  try {
    return parseDurationMs(String(wait));
  } catch (error) {
    if (error instanceof DurationError) throw new UsageError(`--wait: ${error.message}`);
    throw error;
  }
}

export async function readyCommand(args: string[], config: Config, clock: Clock, io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { wait: { type: "string" }, pid: { type: "string" } });
  if (positionals.length > 0) throw new UsageError("ready takes no arguments");
  const deadlineMs = clock.now() + waitMs(values);
  const pid = servicePid(values);
  const url = readinessUrl(config);
  // systemd stops a start check it gave up on with SIGTERM, which main.ts turns into this promise.
  let stopped = false;
  void io.stopRequested().then(() => { stopped = true; });
  for (;;) {
    const reason = await notReady(url, READY_REQUEST_TIMEOUT_MS);
    if (reason === undefined) return EXIT.ok;
    // A service that died while starting will not answer: systemd would wait for this command.
    const ended = pid !== undefined && !isRunning(pid);
    if (ended || stopped || clock.now() + RETRY_INTERVAL_MS > deadlineMs) {
      io.stderr(`not ready: ${ended ? `process ${pid} has ended; ` : ""}${reason}`);
      return EXIT.failure;
    }
    await Promise.race([Bun.sleep(RETRY_INTERVAL_MS), io.stopRequested()]);
  }
}
