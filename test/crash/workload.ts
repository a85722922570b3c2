/**
 * The mixed load of one crash round: a few concurrent workers create keys with permissions and
 * credits, create permissions, set overrides, spend credits through verifyKey with a cost and
 * call ratelimit.limit, recording every answer in the Ledger. Once `killAfter` answers have
 * arrived, the service is killed with SIGKILL; requests then in flight are recorded as unanswered.
 */
import { intBetween, pick, type Rng } from "../support/prng.ts";
import type { Ledger, LimitCall, RoundStats } from "./ledger.ts";

export const RATELIMIT_NAMESPACE = "crash_rl";
export const OVERRIDE_NAMESPACE = "crash_overrides";
/** A huge limit: every call succeeds and the remaining count tells how many were counted. */
export const RATELIMIT_LIMIT = 1_000_000_000;
/** 30 days (the longest window): epoch-aligned, so a round almost never crosses a window edge. */
export const RATELIMIT_DURATION_MS = 2_592_000_000;
export const SHARED_PERMISSION = "crash.shared";
const WORKERS = 6;

export interface Target {
  url: string;
  rootKey: string;
  apiId: string;
}

export interface RoundLoad {
  round: number;
  next: Rng;
  ledger: Ledger;
  stats: RoundStats;
  /** The round's rate-limit identifier's calls. */
  limitCalls: LimitCall[];
  /** Answers to wait for before the kill. */
  killAfter: number;
}

/** Thrown for an answer that is wrong in itself (a 5xx, an unexpected code): the round fails at once. */
export class WrongAnswer extends Error {}

/** POSTs; undefined when no answer arrived (connection refused or reset by the kill). */
async function post(t: Target, path: string, body: unknown): Promise<any | undefined> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(t.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.rootKey}` },
      body: JSON.stringify(body),
    });
    text = await res.text();
  } catch {
    return undefined;
  }
  if (res.status !== 200) throw new WrongAnswer(`${path} ${JSON.stringify(body)} answered ${res.status}: ${text}`);
  return JSON.parse(text).data;
}

type Op = (t: Target, load: RoundLoad, n: number) => Promise<boolean>;

const createKey: Op = async (t, load, n) => {
  const permissions = [`crash.r${load.round}.p${n}`, SHARED_PERMISSION].sort();
  const remaining = intBetween(load.next, 5, 40);
  const data = await post(t, "/v2/keys.createKey", { apiId: t.apiId, permissions, credits: { remaining } });
  if (data === undefined) return false;
  load.ledger.addKey({ keyId: data.keyId, key: data.key, permissions, expectedRemaining: remaining });
  return true;
};

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

/** Spends credits; the key's permissions are asked for half the time (they always hold). */
const spend: Op = async (t, load) => {
  const keys = [...load.ledger.keys.values()];
  if (keys.length === 0) return createKey(t, load, 0);
  const k = pick(load.next, keys);
  const cost = intBetween(load.next, 1, 3);
  const query = load.next() < 0.5 ? { permissions: `${k.permissions.join(" AND ")}` } : {};
  const data = await post(t, "/v2/keys.verifyKey", { key: k.key, credits: { cost }, ...query });
  if (data === undefined) {
    k.unansweredSpend += cost;
    return false;
  }
  if (data.code === "VALID") k.expectedRemaining -= cost;
  else if (data.code !== "USAGE_EXCEEDED") throw new WrongAnswer(`verifyKey of ${k.keyId} answered ${data.code}`);
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

const OPS: Array<[string, Op, number]> = [
  ["createKey", createKey, 0.12], ["createPermission", createPermission, 0.06], ["setOverride", setOverride, 0.1],
  ["spend", spend, 0.4], ["limit", limit, 0.32],
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
  const worker = async () => {
    while (killedAtMs === undefined && !failed) {
      const [name, op] = chooseOp(load.next);
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
