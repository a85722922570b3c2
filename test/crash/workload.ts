/**
 * The mixed load of one crash round: a few concurrent workers create, spend, update, re-credit,
 * delete and reroll keys (key-ops.ts), create permissions, set overrides, call ratelimit.limit and
 * read the analytics totals, recording every answer in the Ledger; once during the round the
 * round's root key is revoked with the CLI. Once `killAfter` answers have arrived, the service is
 * killed with SIGKILL; requests then in flight are recorded as unanswered.
 */
import { intBetween, type Rng } from "../support/prng.ts";
import type { LimitCall } from "./ledger.ts";
import { createKey, deleteKey, rerollKey, spend, updateCredits, updateKey } from "./key-ops.ts";
import { post, rootKeyStatus, WrongAnswer, type Op, type RoundLoad, type Target } from "./client.ts";

export const RATELIMIT_NAMESPACE = "crash_rl";
export const OVERRIDE_NAMESPACE = "crash_overrides";
/** A huge limit: every call succeeds and the remaining count tells how many were counted. */
export const RATELIMIT_LIMIT = 1_000_000_000;
/** 30 days (the longest window): epoch-aligned, so a round almost never crosses a window edge. */
export const RATELIMIT_DURATION_MS = 2_592_000_000;
/** Every verification event and the credits they spent; raw events, so the answer is exact. */
export const ANALYTICS_TOTALS_QUERY = "SELECT count() AS events, SUM(spent_credits) AS spent FROM key_verifications_v1";
const WORKERS = 6;

const createPermission: Op = async (t, load, n) => {
  const slug = `crash.perm.r${load.round}.n${n}`;
  const data = await post(t, "/v2/permissions.createPermission", { name: slug, slug });
  if (data === undefined) return false;
  load.ledger.addPermission(slug, data.permissionId);
  return true;
};

const setOverride: Op = async (t, load, n) => {
  const identifier = `r${load.round}_o${n}`;
  const limit = intBetween(load.next, 1, 1000);
  const data = await post(t, "/v2/ratelimit.setOverride", { namespace: OVERRIDE_NAMESPACE, identifier, limit, duration: 60_000 });
  if (data === undefined) return false;
  load.ledger.addOverride(identifier, { overrideId: data.overrideId, limit, duration: 60_000 });
  return true;
};

const limit: Op = async (t, load) => {
  const call: LimitCall = { cost: 1 };
  load.limitCalls.push(call);
  const body = { namespace: RATELIMIT_NAMESPACE, identifier: `round_${load.round}`, limit: RATELIMIT_LIMIT, duration: RATELIMIT_DURATION_MS, cost: 1 };
  const data = await post(t, "/v2/ratelimit.limit", body);
  if (data === undefined) return false;
  if (data.success !== true) throw new WrongAnswer(`ratelimit.limit denied: ${JSON.stringify(data)}`);
  call.answeredAtMs = performance.now();
  call.resetMs = data.reset;
  return true;
};

/** Reads the analytics totals: what one answer showed committed, no later answer may show less. */
const analyticsTotals: Op = async (t, load) => {
  const model = load.ledger.analytics;
  const floor = { events: model.seenEvents, spent: model.seenSpent };
  const answer = load.analyticsLane.then(() => post(t, "/v2/analytics.getVerifications", { query: ANALYTICS_TOTALS_QUERY }));
  load.analyticsLane = answer.catch(() => undefined);
  const data = await answer;
  if (data === undefined) return false;
  const events = data[0].events as number;
  const spent = (data[0].spent ?? 0) as number;
  if (events < floor.events || spent < floor.spent) {
    throw new WrongAnswer(`analytics answered ${events} events and ${spent} credits after an earlier answer showed ${floor.events} and ${floor.spent}`);
  }
  model.seenEvents = Math.max(model.seenEvents, events);
  model.seenSpent = Math.max(model.seenSpent, spent);
  return true;
};

/** Revokes the round's root key with the CLI; the running service must refuse it from its next request. */
const revokeRootKey: Op = async (t, load) => {
  const res = await load.cli(["root-key", "revoke", load.doomed.id]);
  if (res.code !== 0) throw new WrongAnswer(`root-key revoke exited ${res.code}: ${res.stderr}`);
  load.doomed.revoked = true;
  load.ledger.audited.add(load.doomed.id);
  const status = await rootKeyStatus(t, load.doomed.key);
  if (status !== undefined && status !== 401) throw new WrongAnswer(`the revoked root key ${load.doomed.id} answered ${status}, not 401`);
  return true;
};

const OPS: Array<[string, Op, number]> = [
  ["createKey", createKey, 0.1], ["spend", spend, 0.4], ["updateKey", updateKey, 0.07], ["updateCredits", updateCredits, 0.05],
  ["deleteKey", deleteKey, 0.02], ["rerollKey", rerollKey, 0.03], ["createPermission", createPermission, 0.04],
  ["setOverride", setOverride, 0.06], ["limit", limit, 0.21], ["analyticsTotals", analyticsTotals, 0.02],
];

function chooseOp(next: Rng): [string, Op] {
  let x = next();
  for (const [name, op, weight] of OPS) {
    if (x < weight) return [name, op];
    x -= weight;
  }
  return [OPS[0]![0], OPS[0]![1]];
}

/**
 * Runs the workers until `kill` has been called (after `killAfter` answers) and every worker saw
 * its request fail; resolves with performance.now() of the kill. A request left unanswered before
 * the kill means the service died by itself: the round fails.
 */
export async function runLoad(t: Target, load: RoundLoad, kill: () => void): Promise<number> {
  let killedAtMs: number | undefined;
  let failed = false;
  let counter = 0;
  let revoking = false;
  const nextOp = (): [string, Op] => {
    if (revoking || load.stats.acknowledged < load.revokeAfter) return chooseOp(load.next);
    revoking = true;
    return ["revokeRootKey", revokeRootKey];
  };
  const worker = async () => {
    while (killedAtMs === undefined && !failed) {
      const [name, op] = nextOp();
      const answered = await op(t, load, ++counter);
      if (!answered) {
        load.stats.unanswered++;
        if (killedAtMs === undefined) throw new WrongAnswer("the service stopped answering before it was killed");
        continue;
      }
      load.stats.acknowledged++;
      load.stats.byOp[name] = (load.stats.byOp[name] ?? 0) + 1;
      if (killedAtMs === undefined && load.stats.acknowledged >= load.killAfter) {
        killedAtMs = performance.now();
        kill();
      }
    }
  };
  const guarded = () => worker().catch((e: unknown) => {
    failed = true;
    throw e;
  });
  await Promise.all(Array.from({ length: WORKERS }, guarded));
  return killedAtMs!;
}
