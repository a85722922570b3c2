/**
 * The crash-durability loop: start the real `tollgate serve` as a child process on a temp data dir,
 * run the mixed load, SIGKILL it after a random number of answers, start it again on the same data
 * dir and check everything acknowledged is there (verify.ts). The same data dir and ledger carry
 * over from round to round, so each round also re-checks what every earlier round left.
 * Used by crash.test.ts (a few rounds, in `bun test`) and run.ts (`bun run test:crash`).
 */
import { startServe, tempDataDir, type Served } from "../support/cli.ts";
import { intBetween, rng } from "../support/prng.ts";
import { Ledger, emptyStats, type LimitCall, type RoundStats } from "./ledger.ts";
import { checkAudit, checkIntegrity, checkKeys, checkLimit, checkOverrides, checkPermissions } from "./verify.ts";
import { OVERRIDE_NAMESPACE, runLoad, type Target } from "./workload.ts";

export interface CrashOptions {
  rounds: number;
  seed: number;
  /** TOLLGATE_RATELIMIT_FLUSH_MS of the child. */
  flushMs: number;
  /** Most answers to wait for before a kill (the kill comes after 1 to this many). */
  maxAnswersBeforeKill: number;
  log?: (line: string) => void;
}

export interface RoundReport extends RoundStats {
  round: number;
  killAfter: number;
  limitLost: number;
  limitAllowed: number;
  limitSkipped: boolean;
  problems: string[];
}

export interface CrashSummary {
  seed: number;
  rounds: RoundReport[];
  durationMs: number;
  problems: string[];
}

const ROOT_KEY = "tg_crash_root_key_0123456789abcdef";

/**
 * How long before the kill a counted call may still be unsaved: one flush interval, plus one more
 * (at least 100 ms) for the timer to be late on a busy machine and for the flush's own commit.
 */
export function lossWindowMs(flushMs: number): number {
  return flushMs + Math.max(flushMs, 100);
}

async function start(dataDir: string, flushMs: number): Promise<Served> {
  return startServe({ dataDir, env: { TOLLGATE_ROOT_KEY: ROOT_KEY, TOLLGATE_RATELIMIT_FLUSH_MS: String(flushMs) }, startTimeoutMs: 30_000 });
}

async function killAndWait(served: Served): Promise<void> {
  served.kill();
  await served.exitCode();
}

async function checkAll(t: Target, ledger: Ledger, dataDir: string): Promise<string[]> {
  const problems = [
    ...await checkKeys(t, ledger), ...await checkPermissions(t, ledger), ...await checkOverrides(t, ledger), ...await checkAudit(t, ledger),
  ];
  return [...problems, ...checkIntegrity(dataDir)];
}

/** The API the keys go in, and the override namespace (a namespace is made by its first limit call). */
async function setUp(served: Served): Promise<string> {
  const api = await served.post("/v2/apis.createApi", { name: "crash" }, ROOT_KEY);
  const ns = await served.post("/v2/ratelimit.limit", { namespace: OVERRIDE_NAMESPACE, identifier: "setup", limit: 1, duration: 60_000 }, ROOT_KEY);
  if (api.status !== 200 || ns.status !== 200) throw new Error(`set-up answered ${api.status} ${JSON.stringify(api.body)}, ${ns.status} ${JSON.stringify(ns.body)}`);
  return api.body.data.apiId as string;
}

/** One round on a running service: load, kill, restart, check. Returns the report and the restarted service. */
async function round(served: Served, ctx: { apiId: string; ledger: Ledger; dataDir: string; round: number; next: () => number; opts: CrashOptions }): Promise<[RoundReport, Served]> {
  const { ledger, dataDir, opts } = ctx;
  const target = (s: Served): Target => ({ url: s.url, rootKey: ROOT_KEY, apiId: ctx.apiId });
  const killAfter = intBetween(ctx.next, 1, opts.maxAnswersBeforeKill);
  const stats = emptyStats();
  const limitCalls: LimitCall[] = [];
  const killedAtMs = await runLoad(target(served), { round: ctx.round, next: ctx.next, ledger, stats, limitCalls, killAfter }, () => served.kill());
  await killAndWait(served);
  const restarted = await start(dataDir, opts.flushMs);
  const limit = await checkLimit(target(restarted), ctx.round, limitCalls, killedAtMs, lossWindowMs(opts.flushMs));
  const problems = [...await checkAll(target(restarted), ledger, dataDir), ...limit.problems];
  return [{ round: ctx.round, killAfter, ...stats, limitLost: limit.lost, limitAllowed: limit.allowed, limitSkipped: limit.skipped, problems }, restarted];
}

export function describeRound(r: RoundReport): string {
  const ops = Object.entries(r.byOp).map(([op, n]) => `${op} ${n}`).join(", ");
  const limit = r.limitSkipped ? "window rolled over, not compared" : `${r.limitLost} lost (allowed ${r.limitAllowed})`;
  return `round ${r.round}: killed after ${r.acknowledged} answers (${ops}), ${r.unanswered} unanswered; rate-limit counts: ${limit}; `
    + (r.problems.length === 0 ? "all checks passed" : `${r.problems.length} problems:\n  ${r.problems.join("\n  ")}`);
}

/** Runs the rounds; stops at the first round with a problem (later rounds would only repeat it). */
export async function runCrashRounds(opts: CrashOptions): Promise<CrashSummary> {
  const startedMs = performance.now();
  const data = tempDataDir();
  const next = rng(opts.seed);
  const ledger = new Ledger();
  const reports: RoundReport[] = [];
  let served = await start(data.dir, opts.flushMs);
  try {
    const apiId = await setUp(served);
    for (let i = 1; i <= opts.rounds; i++) {
      const [report, restarted] = await round(served, { apiId, ledger, dataDir: data.dir, round: i, next, opts });
      served = restarted;
      reports.push(report);
      opts.log?.(describeRound(report));
      if (report.problems.length > 0) break;
    }
    await served.stop();
    const afterStop = reports.length === opts.rounds ? checkIntegrity(data.dir) : [];
    return { seed: opts.seed, rounds: reports, durationMs: performance.now() - startedMs, problems: [...reports.flatMap((r) => r.problems), ...afterStop] };
  } finally {
    served.kill();
    data.cleanup();
  }
}
