/**
 * The key operations of the crash load: create, spend (verifyKey with a cost), update (name, meta,
 * enabled, expires, credits), updateCredits (set, increment, decrement), delete and reroll. Each
 * checks its answer against the key's model at once and records the acknowledged effect; a change
 * left unanswered by the kill is kept as the state it may have made.
 */
import { intBetween, pick, type Rng } from "../support/prng.ts";
import { blockingCode, type KeyState, type TrackedKey } from "./ledger.ts";
import { post, WrongAnswer, type Op, type RoundLoad, type Target } from "./client.ts";

export const SHARED_PERMISSION = "crash.shared";
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** How long a rerolled key lives on when it is not expired at once: far beyond any round. */
const REROLL_GRACE_MS = 3_600_000;

export const createKey: Op = async (t, load, n) => {
  const permissions = [`crash.r${load.round}.p${n}`, SHARED_PERMISSION].sort();
  const remaining = intBetween(load.next, 5, 40);
  const name = load.next() < 0.5 ? `c${load.round}_${n}` : null;
  const data = await post(t, "/v2/keys.createKey", { apiId: t.apiId, permissions, credits: { remaining }, ...(name ? { name } : {}) });
  if (data === undefined) return false;
  const state: KeyState = { deleted: false, enabled: true, name, meta: null, expires: null, remaining };
  load.ledger.addKey({ keyId: data.keyId, key: data.key, permissions, state });
  return true;
};

/**
 * Whether a spend's answer fits the key: a deleted, disabled or expired key answers so; otherwise
 * VALID needs the balance before (no higher than `before`) to cover the cost, and USAGE_EXCEEDED
 * needs it not to, which overlapping spends (at most `overlapCost`) can have made so.
 */
function checkSpend(k: TrackedKey, data: any, cost: number, before: number | null, overlapCost: number): void {
  const blocked = blockingCode(k.state, Date.now());
  const wrong = (why: string) => new WrongAnswer(`verifyKey of ${k.keyId} (cost ${cost}, ${JSON.stringify(k.state)}) answered ${JSON.stringify(data)}: ${why}`);
  if (blocked === "EXPIRED?" && data.code === "EXPIRED") return;
  if (blocked !== undefined && blocked !== "EXPIRED?") {
    if (data.code !== blocked) throw wrong(`expected ${blocked}`);
    return;
  }
  if (before === null) {
    if (data.code !== "VALID" || data.credits !== undefined) throw wrong("an unlimited key is VALID without credits");
  } else if (data.code === "VALID") {
    if (before < cost) throw wrong("the acknowledged balance did not cover the cost");
    if (data.credits > before - cost || data.credits < before - overlapCost - cost) throw wrong("the balance after is out of range");
  } else if (data.code !== "USAGE_EXCEEDED" || before - overlapCost >= cost) {
    throw wrong("expected VALID");
  }
}

/** Spends credits through the verifier root key; the key's permissions are asked for half the time (they always hold). */
export const spend: Op = async (t, load, n) => {
  const keys = load.ledger.spendable();
  if (keys.length === 0) return createKey(t, load, n);
  const k = pick(load.next, keys);
  const cost = intBetween(load.next, 1, 3);
  const query = load.next() < 0.5 ? { permissions: k.permissions.join(" AND ") } : {};
  const before = k.state.remaining;
  const startedCostBefore = k.startedSpendCost;
  const inFlightCost = k.spendingCost;
  k.spendingCost += cost;
  k.startedSpendCost += cost;
  load.ledger.analytics.verificationsSent++;
  load.ledger.analytics.costSent += cost;
  let data: any;
  try {
    data = await post(t, "/v2/keys.verifyKey", { key: k.key, credits: { cost }, ...query }, t.verifierKey);
  } finally {
    k.spendingCost -= cost;
  }
  if (data === undefined) {
    k.unansweredSpend += cost;
    return false;
  }
  checkSpend(k, data, cost, before, inFlightCost + (k.startedSpendCost - startedCostBefore - cost));
  if (data.code === "VALID" && k.state.remaining !== null) k.state.remaining -= cost;
  return true;
};

/**
 * Runs a change of `k` that, once acknowledged, leaves `after`; no other request uses the key
 * meanwhile. An unanswered change is kept as a possible state. `check` inspects the answer.
 */
async function change(k: TrackedKey, after: KeyState, send: () => Promise<any | undefined>, check?: (data: any) => void): Promise<boolean> {
  k.changing = true;
  let data: any;
  try {
    data = await send();
  } finally {
    k.changing = false;
  }
  if (data === undefined) {
    k.unansweredChange = after;
    return false;
  }
  check?.(data);
  k.state = after;
  return true;
}

/** A random updateKey body (at least one field) and the state it leaves. */
function randomUpdate(next: Rng, state: KeyState, label: string): { patch: Record<string, unknown>; after: KeyState } {
  const patch: Record<string, unknown> = {};
  const after = { ...state };
  if (next() < 0.4) patch.name = after.name = next() < 0.2 ? null : `u${label}`;
  if (next() < 0.3) patch.meta = after.meta = next() < 0.2 ? null : { label, plan: pick(next, ["free", "team"]) };
  if (next() < 0.3) {
    const expires = pick(next, [null, null, Date.now() + DAY_MS, Date.now() - MINUTE_MS]);
    patch.expires = expires;
    after.expires = expires === null ? null : { from: expires, to: expires };
  }
  if (next() < 0.3) {
    after.remaining = next() < 0.15 ? null : intBetween(next, 0, 40);
    patch.credits = { remaining: after.remaining };
  }
  if (next() < 0.4 || Object.keys(patch).length === 0) patch.enabled = after.enabled = next() < 0.75;
  return { patch, after };
}

function changeable(load: RoundLoad): TrackedKey | undefined {
  const keys = load.ledger.changeable();
  return keys.length === 0 ? undefined : pick(load.next, keys);
}

export const updateKey: Op = async (t, load, n) => {
  const k = changeable(load);
  if (!k) return createKey(t, load, n);
  const { patch, after } = randomUpdate(load.next, k.state, `${load.round}_${n}`);
  return change(k, after, () => post(t, "/v2/keys.updateKey", { keyId: k.keyId, ...patch }, t.managerKey));
};

export const updateCredits: Op = async (t, load, n) => {
  const k = changeable(load);
  if (!k) return createKey(t, load, n);
  const r = k.state.remaining;
  const operation = r === null ? "set" : pick(load.next, ["set", "increment", "decrement"] as const);
  const value = operation === "set" && load.next() < 0.1 ? null : intBetween(load.next, operation === "set" ? 0 : 1, 20);
  const remaining = r === null || operation === "set" ? value : operation === "increment" ? r + value! : Math.max(0, r - value!);
  return change(k, { ...k.state, remaining }, () => post(t, "/v2/keys.updateCredits", { keyId: k.keyId, operation, value }, t.managerKey), (data) => {
    if (data.remaining !== remaining) throw new WrongAnswer(`updateCredits ${operation} ${value} of ${k.keyId} (${r}) answered ${JSON.stringify(data)}, expected ${remaining}`);
  });
};

export const deleteKey: Op = async (t, load, n) => {
  const k = changeable(load);
  if (!k) return createKey(t, load, n);
  return change(k, { ...k.state, deleted: true }, () => post(t, "/v2/keys.deleteKey", { keyId: k.keyId }, t.managerKey));
};

/** When a reroll sent at `sentMs` and answered at `answeredMs` makes the old key expire (rerollKey's rule). */
function rerolledExpiry(current: KeyState["expires"], expirationMs: number, sentMs: number, answeredMs: number): KeyState["expires"] {
  const grace = (nowMs: number) => (expirationMs === 0 ? nowMs : Math.ceil((nowMs + expirationMs) / MINUTE_MS) * MINUTE_MS);
  const range = { from: grace(sentMs), to: grace(answeredMs) };
  return current === null ? range : { from: Math.min(current.from, range.from), to: Math.min(current.to, range.to) };
}

/** Rerolls with the bootstrap key: the new key copies the old one's state; the old one expires now or in an hour. */
export const rerollKey: Op = async (t, load, n) => {
  const k = changeable(load);
  if (!k) return createKey(t, load, n);
  const expiration = pick(load.next, [0, REROLL_GRACE_MS]);
  const sentMs = Date.now();
  const copied = { ...k.state };
  // The upper end of the range is only known once answered; until then the widest an hour allows.
  const maybe: KeyState = { ...k.state, expires: rerolledExpiry(k.state.expires, expiration, sentMs, sentMs + REROLL_GRACE_MS) };
  return change(k, maybe, () => post(t, "/v2/keys.rerollKey", { keyId: k.keyId, expiration }), (data) => {
    maybe.expires = rerolledExpiry(copied.expires, expiration, sentMs, Date.now());
    load.ledger.addKey({ keyId: data.keyId, key: data.key, permissions: k.permissions, state: copied });
  });
};
