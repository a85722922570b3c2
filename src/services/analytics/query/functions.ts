/**
 * The function allow-list: upstream's documented ClickHouse functions that tollgate supports, each
 * with its arity and its translation (SQLite or PostgreSQL: what differs is in dialect.ts). Time is
 * Unix milliseconds (UTC) throughout. A function missing here is refused with 400 `invalid_analytics_function`.
 */
import { AppError } from "../../../errors/app-error.ts";
import type { Dialect } from "./dialect.ts";
import type { Expr } from "./ir.ts";

export type CallExpr = Extract<Expr, { kind: "call" }>;

/** What a translation may use: its arguments printed as SQL, bound parameters and the query's clock. */
export interface Emit {
  expr(e: Expr): string;
  /** `e` where a condition is expected (a boolean in PostgreSQL). */
  cond(e: Expr): string;
  dialect: Dialect;
  param(value: string | number): string;
  /** The injected clock's time when the query was compiled, Unix ms. */
  nowMs: number;
}

interface FunctionSpec {
  min: number;
  max: number;
  /** `count(*)` */
  star?: boolean;
  /** `f(DISTINCT x)` */
  distinct?: boolean;
  sql(call: CallExpr, out: Emit): string;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
/** ClickHouse weeks start on Sunday; the Unix epoch was a Thursday, four days after one. */
const SUNDAY_OFFSET_MS = 4 * DAY_MS;

const arg = (call: CallExpr, out: Emit, i: number): string => out.expr(call.args[i]!);
const distinct = (call: CallExpr): string => (call.distinct ? "DISTINCT " : "");
const cond = (call: CallExpr, out: Emit, i: number): string => out.cond(call.args[i]!);
const truncate = (unitMs: number, offsetMs?: number) => (call: CallExpr, out: Emit) => out.dialect.truncate(arg(call, out, 0), unitMs, offsetMs);
const calendarStart = (unit: "month" | "year") => (call: CallExpr, out: Emit) => out.dialect.calendarStart(arg(call, out, 0), unit);
const aggregate = (fn: string, extra: Partial<FunctionSpec> = {}): FunctionSpec => ({
  min: 1, max: 1, ...extra, sql: (call, out) => `${fn}(${distinct(call)}${arg(call, out, 0)})`,
});
const scalar = (fn: string, min: number, max: number): FunctionSpec => ({
  min, max, sql: (call, out) => `${fn}(${call.args.map((a) => out.expr(a)).join(", ")})`,
});

const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map<string, FunctionSpec>([
  ["count", { min: 0, max: 1, star: true, distinct: true, sql: (c, out) => (c.args.length === 0 ? "count(*)" : `count(${distinct(c)}${arg(c, out, 0)})`) }],
  // ClickHouse sums of no rows are 0, SQLite's are NULL.
  ["sum", { min: 1, max: 1, distinct: true, sql: (c, out) => `coalesce(sum(${distinct(c)}${arg(c, out, 0)}), 0)` }],
  ["avg", aggregate("avg", { distinct: true })],
  ["min", aggregate("min")],
  ["max", aggregate("max")],
  ["uniq", { min: 1, max: 1, sql: (c, out) => `count(DISTINCT ${arg(c, out, 0)})` }],
  ["uniqexact", { min: 1, max: 1, sql: (c, out) => `count(DISTINCT ${arg(c, out, 0)})` }],
  ["sumif", { min: 2, max: 2, sql: (c, out) => `coalesce(sum(CASE WHEN ${cond(c, out, 1)} THEN ${arg(c, out, 0)} ELSE 0 END), 0)` }],
  ["countif", { min: 1, max: 1, sql: (c, out) => `count(CASE WHEN ${cond(c, out, 0)} THEN 1 END)` }],
  ["if", { min: 3, max: 3, sql: (c, out) => `(CASE WHEN ${cond(c, out, 0)} THEN ${arg(c, out, 1)} ELSE ${arg(c, out, 2)} END)` }],
  ["round", { min: 1, max: 2, sql: (c, out) => out.dialect.round(c.args.map((a) => out.expr(a))) }],
  ["abs", scalar("abs", 1, 1)],
  ["lower", scalar("lower", 1, 1)],
  ["upper", scalar("upper", 1, 1)],
  ["length", scalar("length", 1, 1)],
  ["coalesce", scalar("coalesce", 2, 32)],
  ["tostartofminute", { min: 1, max: 1, sql: truncate(MINUTE_MS) }],
  ["tostartofhour", { min: 1, max: 1, sql: truncate(HOUR_MS) }],
  ["tostartofday", { min: 1, max: 1, sql: truncate(DAY_MS) }],
  ["tostartofweek", { min: 1, max: 1, sql: truncate(WEEK_MS, SUNDAY_OFFSET_MS) }],
  ["tostartofmonth", { min: 1, max: 1, sql: calendarStart("month") }],
  ["tostartofyear", { min: 1, max: 1, sql: calendarStart("year") }],
  ["todate", { min: 1, max: 1, sql: toDate }],
  ["now", { min: 0, max: 0, sql: (_c, out) => String(out.nowMs) }],
  ["today", { min: 0, max: 0, sql: (_c, out) => String(startOfDayMs(out.nowMs)) }],
]);

/** toDate('2024-05-01') is that day's midnight; toDate(<ms>) the midnight before it. */
function toDate(call: CallExpr, out: Emit): string {
  const only = call.args[0]!;
  if (only.kind === "string") return out.dialect.dateMs(out.param(only.value));
  return truncate(DAY_MS)(call, out);
}

export function startOfDayMs(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Whether `name` (any case) is on the allow-list. */
export function isAllowedFunction(name: string): boolean {
  return FUNCTIONS.has(name.toLowerCase());
}

/** Throws 400 `invalid_analytics_query` when a call's arguments do not fit its function. */
export function checkCall(call: CallExpr): void {
  const spec = FUNCTIONS.get(call.key);
  if (!spec) throw new AppError("invalid_analytics_function", { detail: `Function '${call.name}' is not allowed.` });
  const count = call.args.length;
  const bad = (why: string) => new AppError("invalid_analytics_query", { detail: `Function '${call.name}' ${why}.` });
  if (call.star && !spec.star) throw bad("does not take '*'");
  if (call.star && count > 0) throw bad("takes either '*' or arguments");
  if (call.distinct && !spec.distinct) throw bad("does not take DISTINCT");
  if (count < spec.min || count > spec.max) {
    throw bad(spec.min === spec.max ? `takes ${spec.min} argument${spec.min === 1 ? "" : "s"}` : `takes ${spec.min} to ${spec.max} arguments`);
  }
}

/** The expression for an allowed call, in `out`'s dialect. */
export function translateCall(call: CallExpr, out: Emit): string {
  const spec = FUNCTIONS.get(call.key);
  if (!spec) throw new AppError("invalid_analytics_function", { detail: `Function '${call.name}' is not allowed.` });
  return spec.sql(call, out);
}
