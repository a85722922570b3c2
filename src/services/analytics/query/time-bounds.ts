/**
 * Times the translator knows as numbers: `now() - INTERVAL 7 DAY` and friends folded into one Unix
 * ms value, and the bounds on a source's `time` that a WHERE clause sets with them. The raw events
 * table passes those bounds down to the batches its events are stored in (tables.ts `batchBounds`),
 * so a query over the last hour reads the last hour's batches, not the workspace's whole history.
 */
import { AppError } from "../../../errors/app-error.ts";
import { DAY_MS, HOUR_MS, MINUTE_MS, WEEK_MS } from "./functions.ts";
import type { Expr } from "./ir.ts";

const FIXED_UNIT_MS: Partial<Record<string, number>> = { SECOND: 1000, MINUTE: MINUTE_MS, HOUR: HOUR_MS, DAY: DAY_MS, WEEK: WEEK_MS };

/** The milliseconds of an INTERVAL of a fixed-length unit; calendar units only shift a time. */
export function fixedIntervalMs(e: Extract<Expr, { kind: "interval" }>): number {
  const unitMs = FIXED_UNIT_MS[e.unit];
  if (unitMs === undefined) {
    throw new AppError("invalid_analytics_query", { detail: `INTERVAL ${e.amount} ${e.unit} can only be added to or subtracted from a time.` });
  }
  return e.amount * unitMs;
}

/**
 * `now() - INTERVAL 7 DAY` and friends as one number: sums of now(), today(), number literals and
 * fixed intervals, when at least one of them is a time or an interval.
 */
export function foldTime(e: Expr, nowMs: number): number | undefined {
  const value = (x: Expr): [number, boolean] | undefined => {
    if (x.kind === "number") return [x.value, false];
    if (x.kind === "interval") return FIXED_UNIT_MS[x.unit] === undefined ? undefined : [fixedIntervalMs(x), true];
    if (x.kind === "call" && x.key === "now" && x.args.length === 0) return [nowMs, true];
    if (x.kind === "call" && x.key === "today" && x.args.length === 0) return [Math.floor(nowMs / DAY_MS) * DAY_MS, true];
    if (x.kind === "arith" && (x.op === "+" || x.op === "-")) {
      const l = value(x.left);
      const r = value(x.right);
      return l && r ? [x.op === "+" ? l[0] + r[0] : l[0] - r[0], l[1] || r[1]] : undefined;
    }
    return undefined;
  };
  const v = value(e);
  return v && v[1] ? v[0] : undefined;
}

/** Inclusive bounds on a source's `time`: every row the WHERE keeps has `lowest <= time <= highest`. */
export interface TimeBounds {
  lowest?: number;
  highest?: number;
}

/**
 * The bounds that the top-level conjuncts of `where` set on the `time` of the source `alias`
 * (`time` alone names it when `alone`, the SELECT's only source): `time` compared with, or BETWEEN,
 * numbers the translator knows (literals, now(), today(), fixed intervals). Anything else (an OR, a
 * column, a string, a calendar interval) sets no bound: the bounds only ever leave rows out that
 * the WHERE leaves out too.
 */
export function timeBounds(where: Expr | undefined, alias: string, alone: boolean, nowMs: number): TimeBounds {
  const bounds: TimeBounds = {};
  const isTime = (e: Expr) => e.kind === "column" && e.name.toLowerCase() === "time"
    && (e.table === undefined ? alone : e.table.toLowerCase() === alias.toLowerCase());
  const known = (e: Expr): number | undefined => {
    const v = e.kind === "number" ? e.value : foldTime(e, nowMs);
    return v !== undefined && Number.isFinite(v) ? v : undefined;
  };
  const atLeast = (v: number | undefined) => { if (v !== undefined) bounds.lowest = Math.max(bounds.lowest ?? -Infinity, v); };
  const atMost = (v: number | undefined) => { if (v !== undefined) bounds.highest = Math.min(bounds.highest ?? Infinity, v); };
  const visit = (e: Expr): void => {
    if (e.kind === "logical" && e.op === "AND") return e.terms.forEach(visit);
    if (e.kind === "between" && !e.negated && isTime(e.expr)) {
      atLeast(known(e.low));
      atMost(known(e.high));
      return;
    }
    if (e.kind !== "compare") return;
    const [op, other] = isTime(e.left) ? [e.op, e.right] : isTime(e.right) ? [MIRRORED[e.op], e.left] : [undefined, undefined];
    if (!op || !other) return;
    if (op === ">" || op === ">=" || op === "=") atLeast(known(other));
    if (op === "<" || op === "<=" || op === "=") atMost(known(other));
  };
  if (where) visit(where);
  return bounds;
}

/** `x op time` as `time op' x`. */
const MIRRORED = { "=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<=" } as const;
