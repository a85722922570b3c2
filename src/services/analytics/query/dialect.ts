/**
 * What differs between the SQL the translator prints for SQLite (analytics.db, the embedded mode)
 * and for PostgreSQL (schema `analytics`, the cluster mode): quoting, parameters, where the physical
 * tables live, literals, booleans, division, LIKE, NULL order and the time functions on Unix ms. The
 * printer (translate.ts) and the function allow-list (functions.ts) are shared; a query gives the
 * same figures on both (test/routes/v2/analytics run against both backends).
 *
 * PostgreSQL needs more care where SQLite is loose: conditions must be booleans and selected
 * comparisons must stay 1/0 (translate.ts asks `strictBooleans`), integer literals are int8 so that
 * arithmetic on them does not overflow int4, division by zero is NULL as in SQLite, LIKE folds ASCII
 * case and has no escape character as in SQLite, and NULLs sort first ascending as in SQLite.
 */
import { AppError } from "../../../errors/app-error.ts";

export type DialectName = "sqlite" | "postgres";

/** What a dialect's calendar shift may use from the printer. */
export interface ShiftEmit {
  param(value: string | number): string;
}

export interface Dialect {
  name: DialectName;
  quote(name: string): string;
  /** Whether quote() folds names to lower case: the result's columns then get the caller's names back (CompiledQuery.columns). */
  foldsCase: boolean;
  /** Whether the engine finds a SELECT's column aliases in its WHERE and HAVING (else translate.ts puts them in: aliases.ts). */
  resolvesAliases: boolean;
  /** The placeholder of the `n`-th parameter (from 1). */
  placeholder(n: number): string;
  /**
   * Whether a value used twice is one parameter: PostgreSQL then sees `if(x = 'a', …)` in SELECT
   * and in GROUP BY as the same expression (SQLite's `?` are positional).
   */
  reusesParams: boolean;
  /** A physical table, qualified by its schema so that no CTE, whatever its name, can stand in for it. */
  table(physical: string): string;
  /** A number literal. */
  number(value: number): string;
  /** False as a condition. */
  never: string;
  /** A boolean literal where a condition is expected. */
  condition(value: boolean): string;
  /** Conditions must be boolean-typed and booleans selected as 1/0 (PostgreSQL). */
  strictBooleans: boolean;
  /** Whether every SELECT calls the watchdog (SQLite; PostgreSQL has statement_timeout). */
  watchdog: boolean;
  /**
   * `left op right`, where `left` may be a compound itself: SQLite applies compound operators left
   * to right, PostgreSQL binds INTERSECT first, so there the left compound is put in parentheses.
   */
  compound(left: string, leftIsCompound: boolean, op: string, right: string): string;
  /** OFFSET without a LIMIT. */
  offsetOnly(offset: number): string;
  /** The NULLS clause of an ORDER BY item that has none, so that NULLs sort as in SQLite. */
  defaultNulls(desc: boolean): string;
  divide(left: string, right: string): string;
  modulo(left: string, right: string): string;
  like(expr: string, pattern: string, negated: boolean): string;
  /** `x` (Unix ms) rounded down to a multiple of `unitMs` after adding `offsetMs` (then taken off again). */
  truncate(x: string, unitMs: number, offsetMs?: number): string;
  /** The first millisecond of the UTC month or year of `x`. */
  calendarStart(x: string, unit: "month" | "year"): string;
  /** A date (time) string as Unix ms. */
  dateMs(param: string): string;
  /**
   * `time` (Unix ms) plus or minus (`op`) `count` calendar months or years, Unix ms. `simple`: `time`
   * is a column or a literal, which may be repeated.
   */
  shiftCalendar(time: string, op: "+" | "-", count: number, unit: "months" | "years", simple: boolean, out: ShiftEmit): string;
  /** round(x) or round(x, digits). */
  round(args: string[]): string;
}

/** `name` with its ASCII letters in lower case, as SQLite compares names. */
export function lower(name: string): string {
  return name.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

function refuseControl(name: string): void {
  if (/[\u0000-\u001f]/.test(name)) throw new AppError("invalid_analytics_query", { detail: "Identifiers may not contain control characters." });
}

/** A number as SQL: negative ones (and -0) in parentheses. */
function signed(value: number, text: string): string {
  return value < 0 || Object.is(value, -0) ? `(${text})` : text;
}

/**
 * False, and 0, in SQLite. Not the literal `0`: SQLite folds a literal 0 or FALSE together with
 * every condition it is ANDed with, also when it pushes a WHERE down into the rollup views, whose
 * minute branch then loses the condition of its partial index and fails its INDEXED BY with
 * "no query solution". A comparison is never folded that way.
 */
const SQLITE_NEVER = "(1 = 0)";

export const SQLITE: Dialect = {
  name: "sqlite",
  // Backticks, because SQLite reads an unknown "name" as a string.
  quote(name) {
    refuseControl(name);
    return `\`${name.replaceAll("`", "``")}\``;
  },
  foldsCase: false,
  resolvesAliases: true,
  placeholder: () => "?",
  reusesParams: false,
  table: (physical) => `main.${SQLITE.quote(physical)}`,
  number: (value) => (value === 0 && !Object.is(value, -0) ? SQLITE_NEVER : signed(value, String(value))),
  never: SQLITE_NEVER,
  condition: (value) => (value ? "1" : SQLITE_NEVER),
  strictBooleans: false,
  watchdog: true,
  compound: (left, _leftIsCompound, op, right) => `${left} ${op} ${right}`,
  offsetOnly: (offset) => `LIMIT -1 OFFSET ${offset}`,
  defaultNulls: () => "",
  // ClickHouse divides as floating point; SQLite would divide integers as integers.
  divide: (l, r) => `(${l} * 1.0 / ${r})`,
  modulo: (l, r) => `(${l} % ${r})`,
  like: (e, p, negated) => `(${e} ${negated ? "NOT " : ""}LIKE ${p})`,
  truncate: (x, unitMs, offsetMs) => (offsetMs === undefined
    ? `((CAST(${x} AS INTEGER) / ${unitMs}) * ${unitMs})`
    : `((((CAST(${x} AS INTEGER) + ${offsetMs}) / ${unitMs}) * ${unitMs}) - ${offsetMs})`),
  calendarStart: (x, unit) => `(unixepoch(CAST(${x} AS INTEGER) / 1000, 'unixepoch', 'start of ${unit}') * 1000)`,
  dateMs: (param) => `(unixepoch(${param}) * 1000)`,
  shiftCalendar(time, op, count, unit, _simple, out) {
    const modifier = `${op}${count} ${unit}`;
    return `CAST(round(unixepoch(${time} / 1000.0, 'unixepoch', ${out.param(modifier)}, 'subsec') * 1000) AS INTEGER)`;
  },
  round: (args) => `round(${args.join(", ")})`,
};

/** `x` as an int8, truncated towards zero as SQLite's CAST(x AS INTEGER) does. */
const pgInteger = (x: string) => `CAST(trunc(${x}) AS int8)`;
/** Unix ms as a UTC timestamp (without time zone). */
const pgTimestamp = (ms: string) => `(to_timestamp(${ms} / 1000.0) AT TIME ZONE 'UTC')`;
const pgEpochMs = (timestamp: string) => `CAST(round(extract(epoch FROM ${timestamp}) * 1000) AS int8)`;

export const POSTGRES: Dialect = {
  name: "postgres",
  // SQLite matches names whatever their ASCII case; PostgreSQL matches quoted names exactly. In
  // lower case, `V.Time` finds `v.time` as in SQLite.
  quote(name) {
    refuseControl(name);
    return `"${lower(name).replaceAll('"', '""')}"`;
  },
  foldsCase: true,
  resolvesAliases: false,
  placeholder: (n) => `$${n}`,
  reusesParams: true,
  table: (physical) => `analytics.${POSTGRES.quote(physical)}`,
  // int8 and float8, as SQLite's integers and reals: an int4 literal would overflow in `86400000 * 30`.
  number: (value) => signed(value, `${String(value)}::${Number.isSafeInteger(value) ? "int8" : "float8"}`),
  never: "FALSE",
  condition: (value) => (value ? "TRUE" : "FALSE"),
  strictBooleans: true,
  watchdog: false,
  compound: (left, leftIsCompound, op, right) => `${leftIsCompound ? `(${left})` : left} ${op} ${right}`,
  offsetOnly: (offset) => `OFFSET ${offset}`,
  defaultNulls: (desc) => (desc ? " NULLS LAST" : " NULLS FIRST"),
  // SQLite answers NULL where PostgreSQL would fail on a zero divisor.
  divide: (l, r) => `(CAST(${l} AS float8) / NULLIF(${r}, 0))`,
  // SQLite's % takes the integer parts of its operands.
  modulo: (l, r) => `(${pgInteger(l)} % NULLIF(${pgInteger(r)}, 0))`,
  // SQLite's LIKE ignores ASCII case and has no escape character.
  like: (e, p, negated) => `(${e} ${negated ? "NOT " : ""}ILIKE ${p} ESCAPE '')`,
  truncate: (x, unitMs, offsetMs) => (offsetMs === undefined
    ? `((${pgInteger(x)} / ${unitMs}) * ${unitMs})`
    : `((((${pgInteger(x)} + ${offsetMs}) / ${unitMs}) * ${unitMs}) - ${offsetMs})`),
  calendarStart: (x, unit) => pgEpochMs(`date_trunc('${unit}', ${pgTimestamp(pgInteger(x))})`),
  // SQLite's unixepoch() keeps whole seconds.
  // Cast through text: the parameter is text wherever else the same string is used.
  dateMs: (param) => `(CAST(floor(extract(epoch FROM CAST(CAST(${param} AS text) AS timestamp))) AS int8) * 1000)`,
  /**
   * SQLite moves the month and lets a day past its end run into the next month (31 January + 1
   * month = 3 March): the first of the month, shifted, plus the time since the first. `time` is
   * read once, in a scalar subquery, unless it is simple: nested shifts would otherwise repeat it.
   */
  shiftCalendar(time, op, count, unit, simple) {
    const months = (op === "-" ? -count : count) * (unit === "years" ? 12 : 1);
    const shifted = (t: string) => pgEpochMs(`(date_trunc('month', ${t}) + make_interval(months => ${months}) + (${t} - date_trunc('month', ${t})))`);
    if (simple) return shifted(pgTimestamp(time));
    return `(SELECT ${shifted("tg_shift.t")} FROM (SELECT ${pgTimestamp(time)} AS t) AS tg_shift)`;
  },
  // PostgreSQL rounds to digits only as numeric; SQLite answers a real.
  round: ([x, digits]) => `CAST(round(CAST(${x} AS numeric)${digits === undefined ? "" : `, CAST(${digits} AS int4)`}) AS float8)`,
};
