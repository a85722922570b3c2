/**
 * The console's analytics queries (analytics.getVerifications over the public rollup tables and
 * rate-limit decision tables) and the shaping of their rows into chart series. Pure: tested under
 * bun test without a browser.
 */

export type RangeName = "24h" | "7d" | "30d";

interface Range {
  label: string;
  /** Buckets a chart of the range shows. */
  buckets: number;
  /** The rollup the range reads: `key_verifications_per_<granularity>_v1`, `ratelimits_per_<granularity>_v1`. */
  granularity: "hour" | "day";
  interval: string;
  stepMs: number;
}

const HOUR_MS = 3_600_000;

export const RANGES: Readonly<Record<RangeName, Range>> = {
  "24h": { label: "Last 24 hours", buckets: 24, granularity: "hour", interval: "INTERVAL 24 HOUR", stepMs: HOUR_MS },
  "7d": { label: "Last 7 days", buckets: 7 * 24, granularity: "hour", interval: "INTERVAL 7 DAY", stepMs: HOUR_MS },
  "30d": { label: "Last 30 days", buckets: 30, granularity: "day", interval: "INTERVAL 30 DAY", stepMs: 24 * HOUR_MS },
};

/** The public table of `family` at the range's granularity. */
const tableOf = (family: "key_verifications" | "ratelimits", range: RangeName): string => `${family}_per_${RANGES[range].granularity}_v1`;

/** What to count: the whole workspace, one API (by its key space) or one key. */
export interface Scope {
  keySpaceId?: string;
  keyId?: string;
}

/** An id as a SQL string literal; ids are word characters, anything else is refused rather than escaped. */
function literal(id: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(id)) throw new Error(`not an id: ${id}`);
  return `'${id}'`;
}

function where(range: RangeName, scope: Scope): string {
  const parts = [`time >= now() - ${RANGES[range].interval}`];
  if (scope.keySpaceId !== undefined) parts.push(`key_space_id = ${literal(scope.keySpaceId)}`);
  if (scope.keyId !== undefined) parts.push(`key_id = ${literal(scope.keyId)}`);
  return parts.join(" AND ");
}

/** Verifications per bucket and outcome. */
export function verificationsOverTime(range: RangeName, scope: Scope = {}): string {
  return `SELECT time, outcome, SUM(count) AS total FROM ${tableOf("key_verifications", range)} WHERE ${where(range, scope)} GROUP BY time, outcome ORDER BY time`;
}

/** Verifications per API (key space) and outcome. */
export function verificationsByApi(range: RangeName): string {
  return `SELECT key_space_id, outcome, SUM(count) AS total FROM ${tableOf("key_verifications", range)} WHERE ${where(range, {})} GROUP BY key_space_id, outcome`;
}

/** The `limit` keys verified most often. */
export function busiestKeys(range: RangeName, limit = 10): string {
  return `SELECT key_id, key_space_id, SUM(count) AS total FROM ${tableOf("key_verifications", range)} WHERE ${where(range, {})} GROUP BY key_id, key_space_id ORDER BY total DESC, key_id LIMIT ${limit}`;
}

/** When each of `keyIds` was last verified, to the minute (the minute rollup, within its retention). */
export function lastUsed(keySpaceId: string, keyIds: readonly string[]): string {
  return `SELECT key_id, MAX(time) AS last_used FROM key_verifications_per_minute_v1 WHERE key_space_id = ${literal(keySpaceId)} `
    + `AND key_id IN (${keyIds.map(literal).join(", ")}) GROUP BY key_id`;
}

/** Rate-limit decisions per bucket, passed and blocked, of every namespace the key may read or of one. */
export function decisionsOverTime(range: RangeName, namespaceId?: string): string {
  const only = namespaceId === undefined ? "" : ` AND namespace_id = ${literal(namespaceId)}`;
  return `SELECT time, SUM(passed) AS passed, SUM(blocked) AS blocked FROM ${tableOf("ratelimits", range)} `
    + `WHERE time >= now() - ${RANGES[range].interval}${only} GROUP BY time ORDER BY time`;
}

export interface ChartData {
  timesMs: number[];
  series: Array<{ label: string; values: number[] }>;
}

const num = (v: unknown) => (typeof v === "number" ? v : Number(v ?? 0));

/**
 * Rows of verificationsOverTime as one series per outcome over (at least) `buckets` buckets of
 * `stepMs` ending at the latest row's (gaps are 0). The end is the data's, not the browser's clock: the
 * server's clock is the one that stamped the rows.
 */
export function toChart(rows: ReadonlyArray<Record<string, unknown>>, stepMs: number, buckets: number): ChartData {
  if (rows.length === 0) return { timesMs: [], series: [] };
  const times = rows.map((r) => num(r.time));
  const last = Math.max(...times);
  // Rows older than the range's first bucket (the range ends at the data, not at now) still count.
  const first = Math.min(...times, last - (buckets - 1) * stepMs);
  const timesMs: number[] = [];
  for (let t = first; t <= last; t += stepMs) timesMs.push(t);
  const index = new Map(timesMs.map((t, i) => [t, i]));
  const byOutcome = new Map<string, number[]>();
  for (const r of rows) {
    const outcome = String(r.outcome);
    const values = byOutcome.get(outcome) ?? timesMs.map(() => 0);
    const i = index.get(num(r.time));
    if (i !== undefined) values[i] = (values[i] ?? 0) + num(r.total);
    byOutcome.set(outcome, values);
  }
  const series = [...byOutcome].sort(([a], [b]) => (a === "VALID" ? -1 : b === "VALID" ? 1 : a.localeCompare(b)));
  return { timesMs, series: series.map(([label, values]) => ({ label, values })) };
}

/** Rows keyed by a column, with totals per outcome: `{ks_1: {VALID: 3, RATE_LIMITED: 1}}`. */
export function totalsBy(rows: ReadonlyArray<Record<string, unknown>>, column: string): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const key = String(r[column]);
    const totals = out.get(key) ?? {};
    const outcome = String(r.outcome);
    totals[outcome] = (totals[outcome] ?? 0) + num(r.total);
    out.set(key, totals);
  }
  return out;
}

/** Rows of decisionsOverTime as a chart of two series, passed then blocked (see toChart). */
export function toDecisionsChart(rows: ReadonlyArray<Record<string, unknown>>, stepMs: number, buckets: number): ChartData {
  const byOutcome = rows.flatMap((r) => [{ time: r.time, outcome: "passed", total: r.passed }, { time: r.time, outcome: "blocked", total: r.blocked }]);
  const chart = toChart(byOutcome, stepMs, buckets);
  return { timesMs: chart.timesMs, series: chart.series.toSorted((a, b) => (a.label === "passed" ? -1 : b.label === "passed" ? 1 : 0)) };
}
