/**
 * The checks after a restart: every acknowledged key (with its permissions), permission, override
 * and audit entry is there; each key's balance is what the acknowledged spends left, lower only by
 * spends whose answer never arrived; the database passes `PRAGMA integrity_check`; and the round's
 * rate-limit count lost at most what was counted within the last flush interval.
 * Each check returns a list of problems (empty when it holds), so a round reports all of them.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Ledger, LimitCall } from "./ledger.ts";
import { RATELIMIT_DURATION_MS, RATELIMIT_LIMIT, RATELIMIT_NAMESPACE, OVERRIDE_NAMESPACE, type Target } from "./workload.ts";

async function post(t: Target, path: string, body: unknown): Promise<any> {
  const res = await fetch(t.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${t.rootKey}` },
    body: JSON.stringify(body),
  });
  const parsed = await res.json() as any;
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(parsed)}`);
  return parsed;
}

/** Every item of a paginated list route (`data: [...]`, `pagination: {cursor?, hasMore}`). */
async function listAll(t: Target, path: string, body: Record<string, unknown>): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await post(t, path, { ...body, limit: 100, ...(cursor ? { cursor } : {}) });
    items.push(...page.data);
    cursor = page.pagination?.cursor;
  } while (cursor !== undefined);
  return items;
}

export async function checkKeys(t: Target, ledger: Ledger): Promise<string[]> {
  const listed = new Map((await listAll(t, "/v2/apis.listKeys", { apiId: t.apiId })).map((k) => [k.keyId as string, k]));
  const problems: string[] = [];
  for (const k of ledger.keys.values()) {
    const got = listed.get(k.keyId);
    if (!got) {
      problems.push(`key ${k.keyId} was acknowledged but is gone`);
      continue;
    }
    if (JSON.stringify([...(got.permissions ?? [])].sort()) !== JSON.stringify(k.permissions)) {
      problems.push(`key ${k.keyId}: permissions ${JSON.stringify(got.permissions)}, acknowledged ${JSON.stringify(k.permissions)}`);
    }
    const remaining = got.credits?.remaining as number;
    const lowest = Math.max(0, k.expectedRemaining - k.unansweredSpend);
    if (!(remaining <= k.expectedRemaining && remaining >= lowest)) {
      problems.push(`key ${k.keyId}: ${remaining} credits left; acknowledged spends leave ${k.expectedRemaining}, unanswered ones at most ${k.unansweredSpend} less`);
    } else {
      ledger.settle(k.keyId, remaining);
    }
  }
  return problems;
}

export async function checkPermissions(t: Target, ledger: Ledger): Promise<string[]> {
  const listed = new Map((await listAll(t, "/v2/permissions.listPermissions", {})).map((p) => [p.slug as string, p.id as string]));
  return [...ledger.permissions].filter(([slug, id]) => listed.get(slug) !== id).map(([slug, id]) => `permission ${slug} (${id}) was acknowledged but is gone`);
}

export async function checkOverrides(t: Target, ledger: Ledger): Promise<string[]> {
  if (ledger.overrides.size === 0) return [];
  const listed = new Map((await listAll(t, "/v2/ratelimit.listOverrides", { namespace: OVERRIDE_NAMESPACE })).map((o) => [o.identifier as string, o]));
  const problems: string[] = [];
  for (const [identifier, o] of ledger.overrides) {
    const got = listed.get(identifier);
    if (got?.overrideId !== o.overrideId || got.limit !== o.limit || got.duration !== o.duration) {
      problems.push(`override ${identifier}: acknowledged ${JSON.stringify(o)}, found ${JSON.stringify(got)}`);
    }
  }
  return problems;
}

export async function checkAudit(t: Target, ledger: Ledger): Promise<string[]> {
  const named = new Set<string>();
  for (const entry of await listAll(t, "/v2/audit.listLogs", {})) for (const r of entry.resources ?? []) named.add(r.id);
  return [...ledger.audited].filter((id) => !named.has(id)).map((id) => `no audit entry names ${id}, whose creation was acknowledged`);
}

export function checkIntegrity(dataDir: string): string[] {
  const db = new Database(join(dataDir, "tollgate.db"), { readonly: true });
  try {
    const integrity = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all().map((r) => r.integrity_check);
    const foreign = db.query("PRAGMA foreign_key_check").all();
    return [
      ...(integrity.join() === "ok" ? [] : [`integrity_check: ${integrity.join("; ")}`]),
      ...(foreign.length === 0 ? [] : [`foreign_key_check: ${JSON.stringify(foreign.slice(0, 5))}`]),
    ];
  } finally {
    db.close();
  }
}

export interface LimitCheck {
  problems: string[];
  /** Counts acknowledged before the kill that the restarted service no longer has. */
  lost: number;
  /** How many it was allowed to lose: those answered within the loss window before the kill, plus the unanswered. */
  allowed: number;
  /** True when the window rolled over during the round, so the counts are not comparable. */
  skipped: boolean;
}

/**
 * The round's rate-limit count after the restart (a cost-0 call reports without counting), set
 * against the acknowledged calls. Counts acknowledged before `killedAtMs - lossWindowMs` must all
 * be kept; the unanswered may or may not have counted; none may appear from nowhere.
 */
export async function checkLimit(t: Target, round: number, calls: LimitCall[], killedAtMs: number, lossWindowMs: number): Promise<LimitCheck> {
  const body = { namespace: RATELIMIT_NAMESPACE, identifier: `round_${round}`, limit: RATELIMIT_LIMIT, duration: RATELIMIT_DURATION_MS, cost: 0 };
  const probe = (await post(t, "/v2/ratelimit.limit", body)).data;
  const answered = calls.filter((c) => c.answeredAtMs !== undefined);
  const resets = new Set([...answered.map((c) => c.resetMs), probe.reset]);
  if (answered.length === 0 || resets.size > 1) return { problems: [], lost: 0, allowed: 0, skipped: answered.length > 0 };
  const counted = RATELIMIT_LIMIT - probe.remaining;
  const acknowledged = answered.reduce((n, c) => n + c.cost, 0);
  const unanswered = calls.filter((c) => c.answeredAtMs === undefined).reduce((n, c) => n + c.cost, 0);
  const recent = answered.filter((c) => c.answeredAtMs! > killedAtMs - lossWindowMs).reduce((n, c) => n + c.cost, 0);
  const problems: string[] = [];
  if (counted > acknowledged + unanswered) problems.push(`rate limit counted ${counted}, more than the ${acknowledged} acknowledged and ${unanswered} unanswered calls`);
  if (counted < acknowledged - recent) {
    problems.push(`rate limit kept ${counted} of ${acknowledged} acknowledged calls; only the ${recent} answered within ${lossWindowMs} ms of the kill may be lost`);
  }
  return { problems, lost: Math.max(0, acknowledged - counted), allowed: recent + unanswered, skipped: false };
}
