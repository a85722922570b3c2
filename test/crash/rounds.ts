/**
 * The crash-durability loop: start the real `tollgate serve` as a child process on a temp data dir,
 * run the mixed load, SIGKILL it after a random number of answers, start it again on the same data
 * dir and check everything acknowledged is there (verify.ts, verify-keys.ts). The same data dir and
 * ledger carry over from round to round, so each round also re-checks what every earlier round left.
 * The workspace has analytics on, and root keys narrower than the bootstrap key do the
 * verifications and key changes; each round makes one more root key with the CLI and revokes it
 * during the load.
 * Used by crash.test.ts (a few rounds, in `bun run test`) and run.ts (`bun run test:crash`).
 */
import { startServe, tempDataDir, type Served } from "../support/cli.ts";
import { intBetween, rng } from "../support/prng.ts";
import { Ledger, emptyStats, type LimitCall, type RoundStats, type TrackedRootKey } from "./ledger.ts";
import { checkAnalytics, checkAudit, checkIntegrity, checkLimit, checkOverrides, checkPermissions, checkRootKeys } from "./verify.ts";
import { checkKeys } from "./verify-keys.ts";
import { OVERRIDE_NAMESPACE, runLoad } from "./workload.ts";
import { adoptDoomed, cli, createDoomedRootKey, prepare, ROOT_KEY } from "./root-keys.ts";
import type { Target } from "./client.ts";

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
  /** Plaintext verifications after the restart, by the code they answered. */
  verifiedByCode: Record<string, number>;
  /** Verification events in analytics.db after the restart. */
  events: number;
  rootKeys: { live: number; revoked: number };
  problems: string[];
}

export interface CrashSummary {
  seed: number;
  rounds: RoundReport[];
  durationMs: number;
  problems: string[];
}

/**
 * How long before the kill a counted call may still be unsaved: one flush interval, plus one more
 * (at least 100 ms) for the timer to be late on a busy machine and for the flush's own commit.
 */
export function lossWindowMs(flushMs: number): number {
  return flushMs + Math.max(flushMs, 100);
}

async function start(dataDir: string, flushMs: number): Promise<Served> {
  const env = { TOLLGATE_ROOT_KEY: ROOT_KEY, TOLLGATE_RATELIMIT_FLUSH_MS: String(flushMs), TOLLGATE_ANALYTICS_FLUSH_MS: String(Math.max(50, flushMs)) };
  return startServe({ dataDir, env, startTimeoutMs: 30_000 });
}

async function killAndWait(served: Served): Promise<void> {
  served.kill();
  await served.exitCode();
}

type Checked = Pick<RoundReport, "verifiedByCode" | "events" | "rootKeys" | "problems">;

/** Every check after a restart. */
async function checkAll(t: Target, ledger: Ledger, dataDir: string): Promise<Checked> {
  const analytics = await checkAnalytics(t, ledger);
  const keys = await checkKeys(t, ledger);
  const problems = [
    ...analytics.problems, ...keys.problems, ...await checkPermissions(t, ledger), ...await checkOverrides(t, ledger),
    ...await checkRootKeys(t, ledger), ...await checkAudit(t, ledger), ...checkIntegrity(dataDir),
  ];
  const revoked = ledger.rootKeys.filter((r) => r.revoked).length;
  return { verifiedByCode: keys.byCode, events: analytics.events, rootKeys: { live: ledger.rootKeys.length - revoked, revoked }, problems };
}

/** The API the keys go in, and the override namespace (a namespace is made by its first limit call). */
async function setUp(served: Served): Promise<string> {
  const api = await served.post("/v2/apis.createApi", { name: "crash" }, ROOT_KEY);
  const ns = await served.post("/v2/ratelimit.limit", { namespace: OVERRIDE_NAMESPACE, identifier: "setup", limit: 1, duration: 60_000 }, ROOT_KEY);
  if (api.status !== 200 || ns.status !== 200) throw new Error(`set-up answered ${api.status} ${JSON.stringify(api.body)}, ${ns.status} ${JSON.stringify(ns.body)}`);
  return api.body.data.apiId as string;
}

interface RoundContext {
  base: Omit<Target, "url">;
  ledger: Ledger;
  dataDir: string;
  round: number;
  next: () => number;
  opts: CrashOptions;
}

/**
 * One round on a running service: load, kill, restart, check. Resolves with the report, the
 * restarted service and the next round's doomed root key (made while the service restarts).
 */
async function round(served: Served, doomed: TrackedRootKey, ctx: RoundContext): Promise<[RoundReport, Served, TrackedRootKey | undefined]> {
  const { ledger, dataDir, opts } = ctx;
  const target = (s: Served): Target => ({ ...ctx.base, url: s.url });
  await adoptDoomed(target(served), ledger, doomed, ctx.round);
  const killAfter = intBetween(ctx.next, 1, opts.maxAnswersBeforeKill);
  const revokeAfter = intBetween(ctx.next, 0, killAfter - 1);
  const stats = emptyStats();
  const limitCalls: LimitCall[] = [];
  const load = { round: ctx.round, next: ctx.next, ledger, stats, limitCalls, killAfter, doomed, revokeAfter, analyticsLane: Promise.resolve(), cli: (args: string[]) => cli(dataDir, args) };
  const killedAtMs = await runLoad(target(served), load, () => served.kill());
  await killAndWait(served);
  const [restarted, nextDoomed] = await Promise.all([
    start(dataDir, opts.flushMs), ctx.round < opts.rounds ? createDoomedRootKey(dataDir, ctx.round + 1) : undefined,
  ]);
  const limit = await checkLimit(target(restarted), ctx.round, limitCalls, killedAtMs, lossWindowMs(opts.flushMs));
  const checked = await checkAll(target(restarted), ledger, dataDir);
  const report = { round: ctx.round, killAfter, ...stats, limitLost: limit.lost, limitAllowed: limit.allowed, limitSkipped: limit.skipped, ...checked };
  return [{ ...report, problems: [...checked.problems, ...limit.problems] }, restarted, nextDoomed];
}

export function describeRound(r: RoundReport): string {
  const ops = Object.entries(r.byOp).map(([op, n]) => `${op} ${n}`).join(", ");
  const limit = r.limitSkipped ? "window rolled over, not compared" : `${r.limitLost} lost (allowed ${r.limitAllowed})`;
  const verified = Object.entries(r.verifiedByCode).map(([code, n]) => `${code} ${n}`).join(", ");
  return `round ${r.round}: killed after ${r.acknowledged} answers (${ops}), ${r.unanswered} unanswered; rate-limit counts: ${limit}; `
    + `keys verified by plaintext: ${verified}; ${r.events} verification events; root keys ${r.rootKeys.live} live, ${r.rootKeys.revoked} revoked; `
    + (r.problems.length === 0 ? "all checks passed" : `${r.problems.length} problems:\n  ${r.problems.join("\n  ")}`);
}

/** Runs the rounds; stops at the first round with a problem (later rounds would only repeat it). */
export async function runCrashRounds(opts: CrashOptions): Promise<CrashSummary> {
  const startedMs = performance.now();
  const data = tempDataDir();
  const next = rng(opts.seed);
  const ledger = new Ledger();
  const reports: RoundReport[] = [];
  let served: Served | undefined;
  try {
    const prepared = await prepare(data.dir);
    served = await start(data.dir, opts.flushMs);
    const base = { ...prepared.keys, rootKey: ROOT_KEY, apiId: await setUp(served) };
    let doomed: TrackedRootKey | undefined = prepared.firstDoomed;
    for (let i = 1; i <= opts.rounds && doomed; i++) {
      const [report, restarted, nextDoomed] = await round(served, doomed, { base, ledger, dataDir: data.dir, round: i, next, opts });
      served = restarted;
      doomed = nextDoomed;
      reports.push(report);
      opts.log?.(describeRound(report));
      if (report.problems.length > 0) break;
    }
    await served.stop();
    const afterStop = reports.length === opts.rounds ? checkIntegrity(data.dir) : [];
    return { seed: opts.seed, rounds: reports, durationMs: performance.now() - startedMs, problems: [...reports.flatMap((r) => r.problems), ...afterStop] };
  } finally {
    served?.kill();
    data.cleanup();
  }
}
