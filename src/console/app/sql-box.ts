/**
 * The analytics page's pure parts: the tables and columns a query may use, where in the query a
 * 400 puts its error, and a result's rows as chart series. The table list is written out (the
 * server's, src/services/analytics/query/tables.ts, also holds each column's SQL, which has no
 * place in the browser); test/console/sql-box.test.ts checks that it equals the server's.
 */

const IDENTITY = ["workspace_id", "key_space_id", "identity_id", "external_id", "key_id"];
const RAW = ["request_id", "time", ...IDENTITY, "region", "source", "outcome", "tags", "spent_credits", "latency"];
const ROLLUP = ["time", ...IDENTITY, "source", "outcome", "tags", "count", "spent_credits", "latency_avg"];
const DECISIONS = ["time", "workspace_id", "namespace_id", "passed", "blocked", "total"];

export const ANALYTICS_TABLES: ReadonlyArray<{ name: string; columns: readonly string[] }> = [
  { name: "key_verifications_v1", columns: RAW },
  { name: "key_verifications_per_minute_v1", columns: ROLLUP },
  { name: "key_verifications_per_hour_v1", columns: ROLLUP },
  { name: "key_verifications_per_day_v1", columns: ROLLUP },
  { name: "key_verifications_per_month_v1", columns: ROLLUP },
  { name: "ratelimits_per_minute_v1", columns: DECISIONS },
  { name: "ratelimits_per_hour_v1", columns: DECISIONS },
  { name: "ratelimits_per_day_v1", columns: DECISIONS },
  { name: "ratelimits_per_month_v1", columns: DECISIONS },
];

export interface ErrorPosition {
  line: number;
  column: number;
  /** Offset of the position in the query (UTF-16 units), for selecting it in the box. */
  offset: number;
}

/** Line and column (1-based) of `offset` in `query`. */
function positionAt(query: string, offset: number): ErrorPosition {
  const before = query.slice(0, offset).split("\n");
  return { line: before.length, column: (before[before.length - 1] ?? "").length + 1, offset };
}

/**
 * Where the parser's detail places the error: "found: X at Line: 2, Column: 8" (1-based), or the
 * end of the query for "found: EOF". The parser sometimes points at the token after the X it
 * names (after a trailing comma), so a position not at X moves back to the last X before it.
 * Undefined when the detail names no position.
 */
export function errorPosition(query: string, detail: string): ErrorPosition | undefined {
  const at = /(?:found: (.+?) )?at Line: (\d+), Column: (\d+)/.exec(detail);
  if (at) {
    const lines = query.split("\n");
    const line = Math.min(Number(at[2]), lines.length);
    const column = Math.min(Number(at[3]), (lines[line - 1] ?? "").length + 1);
    const offset = lines.slice(0, line - 1).reduce((sum, l) => sum + l.length + 1, 0) + column - 1;
    const found = at[1]?.toLowerCase();
    const lower = query.toLowerCase();
    if (found === undefined || lower.startsWith(found, offset)) return { line, column, offset };
    const back = lower.lastIndexOf(found, offset);
    return back >= 0 ? positionAt(query, back) : { line, column, offset };
  }
  if (/found: EOF\b/.test(detail)) return positionAt(query, query.trimEnd().length);
  return undefined;
}

export interface ResultChart {
  timesMs: number[];
  series: Array<{ label: string; values: Array<number | null> }>;
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/**
 * A result with a numeric `time` column as series over time: one per other numeric column, or,
 * when the rows also have text columns (like `outcome`), one per value of those columns and numeric
 * column. Undefined when there is no `time` column or nothing numeric to draw.
 */
export function resultChart(rows: ReadonlyArray<Record<string, unknown>>): ResultChart | undefined {
  const first = rows[0];
  if (!first || !rows.every((r) => isNumber(r.time))) return undefined;
  const columns = Object.keys(first).filter((c) => c !== "time");
  const numeric = columns.filter((c) => rows.every((r) => r[c] === null || isNumber(r[c])));
  const groups = columns.filter((c) => !numeric.includes(c));
  if (numeric.length === 0) return undefined;
  const timesMs = [...new Set(rows.map((r) => r.time as number))].sort((a, b) => a - b);
  const index = new Map(timesMs.map((t, i) => [t, i]));
  const series = new Map<string, Array<number | null>>();
  for (const r of rows) {
    const group = groups.map((g) => String(r[g])).join(" ");
    for (const c of numeric) {
      const label = group === "" ? c : numeric.length === 1 ? group : `${group} ${c}`;
      const values = series.get(label) ?? timesMs.map(() => null);
      const i = index.get(r.time as number)!;
      values[i] = (values[i] ?? 0) + ((r[c] as number | null) ?? 0);
      series.set(label, values);
    }
  }
  return { timesMs, series: [...series].map(([label, values]) => ({ label, values })) };
}
