/**
 * The checks after a restart besides the keys' (verify-keys.ts): every acknowledged permission,
 * override and audit entry is there; each root key made for a round answers 401 once its revocation
 * was acknowledged, and works otherwise; analytics answers, shows every event and credit an
 * earlier answer showed (a crash may lose only events not yet written), no more than were sent,
 * and the same totals in the raw events and in every rollup; both databases pass
 * `PRAGMA integrity_check`; and the round's rate-limit count lost at most what was counted within
 * the last flush interval.
 * Each check returns a list of problems (empty when it holds), so a round reports all of them.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Ledger, LimitCall } from "./ledger.ts";
import { askOk, listAll, rootKeyStatus, type Target } from "./client.ts";
import { ANALYTICS_TOTALS_QUERY, RATELIMIT_DURATION_MS, RATELIMIT_LIMIT, RATELIMIT_NAMESPACE, OVERRIDE_NAMESPACE } from "./workload.ts";

/** The databases of a data dir. */
const DATABASE_FILES = ["tollgate.db", "analytics.db"];
const ROLLUPS = ["key_verifications_per_minute_v1", "key_verifications_per_hour_v1", "key_verifications_per_day_v1", "key_verifications_per_month_v1"];

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
  return DATABASE_FILES.flatMap((file) => {
    const db = new Database(join(dataDir, file), { readonly: true });
    try {
      const integrity = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all().map((r) => r.integrity_check);
      const foreign = db.query("PRAGMA foreign_key_check").all();
      return [
        ...(integrity.join() === "ok" ? [] : [`${file} integrity_check: ${integrity.join("; ")}`]),
        ...(foreign.length === 0 ? [] : [`${file} foreign_key_check: ${JSON.stringify(foreign.slice(0, 5))}`]),
      ];
    } finally {
      db.close();
    }
  });
}

export async function checkRootKeys(t: Target, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  for (const r of ledger.rootKeys) {
    const status = await rootKeyStatus(t, r.key);
    if (status !== (r.revoked ? 401 : 200)) problems.push(`root key ${r.id} (${r.revoked ? "revoked" : "live"}) answered ${status}`);
  }
  return problems;
}

/**
 * The analytics totals in one query (one snapshot): raw events and every rollup must agree, hold
 * at least what an answer before the kill showed, and at most what was sent. Resolves with the
 * problems and the number of events.
 */
export async function checkAnalytics(t: Target, ledger: Ledger): Promise<{ problems: string[]; events: number }> {
  const query = [ANALYTICS_TOTALS_QUERY.replace("SELECT ", "SELECT 'raw' AS source, "),
    ...ROLLUPS.map((table) => `SELECT '${table}', SUM(count), SUM(spent_credits) FROM ${table}`)].join(" UNION ALL ");
  const rows = (await askOk(t, "/v2/analytics.getVerifications", { query })).data as Array<{ source: string; events: number | null; spent: number | null }>;
  const totals = rows.map((r) => ({ source: r.source, events: r.events ?? 0, spent: r.spent ?? 0 }));
  const raw = totals.find((r) => r.source === "raw")!;
  const a = ledger.analytics;
  const problems = [
    ...totals.filter((r) => r.events !== raw.events || r.spent !== raw.spent).map((r) => `analytics: ${r.source} holds ${r.events} events and ${r.spent} credits, the raw events ${raw.events} and ${raw.spent}`),
    ...(raw.events < a.seenEvents || raw.spent < a.seenSpent ? [`analytics: ${raw.events} events and ${raw.spent} credits after the restart, but ${a.seenEvents} and ${a.seenSpent} were answered before the kill`] : []),
    ...(raw.events > a.verificationsSent || raw.spent > a.costSent ? [`analytics: ${raw.events} events and ${raw.spent} credits, more than the ${a.verificationsSent} verifications sent, costing ${a.costSent}`] : []),
  ];
  a.seenEvents = raw.events;
  a.seenSpent = raw.spent;
  return { problems, events: raw.events };
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
  const probe = (await askOk(t, "/v2/ratelimit.limit", body)).data;
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
