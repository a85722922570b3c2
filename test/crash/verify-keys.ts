/**
 * The key checks after a restart. First by id: each key listed (or gone, when deleted) must be in
 * its acknowledged state, or in the state its unanswered change would have left, with a balance no
 * higher than the acknowledged spends left and lower only by unanswered ones; what is found becomes
 * the model. Then by plaintext: each key, verified as a client would, answers the code its state
 * implies (NOT_FOUND when deleted, DISABLED, EXPIRED, USAGE_EXCEEDED at a zero balance, else VALID)
 * with its fields; none of these verifications spends anything.
 */
import type { KeyState, Ledger, TrackedKey } from "./ledger.ts";
import { blockingCode } from "./ledger.ts";
import { ask, listAll, type Target } from "./client.ts";

/** How many plaintext verifications are in flight at once. */
const PARALLEL = 8;

/** The state listKeys shows for a key; a key it does not list is deleted (its other fields are no longer seen). */
function observedState(view: any, modelled: KeyState): KeyState {
  if (view === undefined) return { ...modelled, deleted: true };
  const expires = view.expires as number | undefined;
  return {
    deleted: false, enabled: view.enabled, name: view.name ?? null, meta: view.meta ?? null,
    expires: expires === undefined ? null : { from: expires, to: expires }, remaining: view.credits?.remaining ?? null,
  };
}

/** Whether `observed` is `candidate`, its balance lower by at most `unansweredSpend`. */
function matches(candidate: KeyState, observed: KeyState, unansweredSpend: number): boolean {
  if (candidate.deleted || observed.deleted) return candidate.deleted === observed.deleted;
  const e = candidate.expires;
  const o = observed.expires;
  const expiresFits = e === null || o === null ? e === o : o.from >= e.from && o.from <= e.to;
  const c = candidate.remaining;
  const r = observed.remaining;
  const remainingFits = c === null || r === null ? c === r : r <= c && r >= Math.max(0, c - unansweredSpend);
  return expiresFits && remainingFits && candidate.enabled === observed.enabled && candidate.name === observed.name
    && Bun.deepEquals(candidate.meta, observed.meta);
}

function checkById(k: TrackedKey, view: any): string | undefined {
  if (view !== undefined && JSON.stringify([...(view.permissions ?? [])].sort()) !== JSON.stringify(k.permissions)) {
    return `key ${k.keyId}: permissions ${JSON.stringify(view.permissions)}, acknowledged ${JSON.stringify(k.permissions)}`;
  }
  const observed = observedState(view, k.state);
  const candidates = k.unansweredChange ? [k.state, k.unansweredChange] : [k.state];
  if (candidates.some((c) => matches(c, observed, k.unansweredSpend))) return undefined;
  return `key ${k.keyId}: found ${JSON.stringify(observed)}; acknowledged ${JSON.stringify(k.state)}`
    + (k.unansweredChange ? `, or after its unanswered change ${JSON.stringify(k.unansweredChange)}` : "")
    + (k.unansweredSpend > 0 ? `, less up to ${k.unansweredSpend} credits of unanswered spends` : "");
}

/** The fields of a verification's answer for a key in state `s` (of those the check compares). */
function expectedAnswer(k: TrackedKey, code: string): Record<string, unknown> {
  const s = k.state;
  if (s.deleted) return { valid: false, code, keyId: k.keyId };
  return {
    valid: code === "VALID", code, keyId: k.keyId, enabled: s.enabled,
    ...(s.name !== null ? { name: s.name } : {}), ...(s.meta !== null ? { meta: s.meta } : {}),
    ...(s.expires !== null ? { expires: s.expires.from } : {}), ...(s.remaining !== null ? { credits: s.remaining } : {}),
  };
}

const COMPARED = ["valid", "code", "keyId", "enabled", "name", "meta", "expires", "credits"];

/** Verifies a settled key by its plaintext; resolves with the code, or a problem. */
async function verifyByPlaintext(t: Target, ledger: Ledger, k: TrackedKey): Promise<{ code: string; problem?: string }> {
  const s = k.state;
  const code = blockingCode(s, Date.now()) ?? (s.remaining === 0 ? "USAGE_EXCEEDED" : "VALID");
  // Cost 0 passes the credits without spending; at a zero balance, cost 1 shows USAGE_EXCEEDED, which spends nothing either.
  const cost = s.remaining === 0 ? 1 : 0;
  ledger.analytics.verificationsSent++;
  ledger.analytics.costSent += cost;
  const res = await ask(t, "/v2/keys.verifyKey", { key: k.key, credits: { cost }, permissions: k.permissions.join(" AND ") }, t.verifierKey);
  const data = res.body?.data ?? {};
  const want = expectedAnswer(k, code);
  const got = Object.fromEntries(COMPARED.filter((f) => f in data && (f in want || !s.deleted)).map((f) => [f, data[f]]));
  if (res.status === 200 && Bun.deepEquals(got, want)) return { code };
  return { code, problem: `key ${k.keyId} verified by its plaintext answered ${res.status} ${JSON.stringify(res.body)}; its state ${JSON.stringify(s)} implies ${JSON.stringify(want)}` };
}

/** The checks of every key of the ledger; `byCode` counts the plaintext verifications by the code they answered. */
export async function checkKeys(t: Target, ledger: Ledger): Promise<{ problems: string[]; byCode: Record<string, number> }> {
  const listed = new Map((await listAll(t, "/v2/apis.listKeys", { apiId: t.apiId })).map((k) => [k.keyId as string, k]));
  const problems: string[] = [];
  const settled: TrackedKey[] = [];
  for (const k of ledger.keys.values()) {
    const problem = checkById(k, listed.get(k.keyId));
    if (problem) problems.push(problem);
    else {
      ledger.settle(k, observedState(listed.get(k.keyId), k.state));
      settled.push(k);
    }
  }
  const byCode: Record<string, number> = {};
  for (let i = 0; i < settled.length; i += PARALLEL) {
    for (const r of await Promise.all(settled.slice(i, i + PARALLEL).map((k) => verifyByPlaintext(t, ledger, k)))) {
      byCode[r.code] = (byCode[r.code] ?? 0) + 1;
      if (r.problem) problems.push(r.problem);
    }
  }
  return { problems, byCode };
}
