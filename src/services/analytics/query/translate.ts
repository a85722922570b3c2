/**
 * The rewritten query → SQL and its bound parameters, for SQLite (analytics.db) or PostgreSQL (the
 * cluster mode's schema `analytics`): one printer, the differences in a dialect (dialect.ts). Every
 * string the caller wrote becomes a parameter; identifiers are quoted here; numbers are printed
 * from their parsed values. Public tables become subqueries over the physical tables, filtered to
 * the caller's workspace (and key spaces). On SQLite, every SELECT that reads a source also calls
 * the watchdog for its joined rows (see WATCHDOG_FUNCTION), so most long queries end by themselves
 * at their deadline; PostgreSQL ends them by its statement_timeout (execute-pg.ts).
 */
import { AppError } from "../../../errors/app-error.ts";
import { inlineAliases } from "./aliases.ts";
import { ColumnKnowledge } from "./columns.ts";
import { SQLITE, type Dialect } from "./dialect.ts";
import { translateCall, type Emit } from "./functions.ts";
import type { Expr, OrderItem, Query, Select, SetExpr, Source } from "./ir.ts";
import type { PlannedSource } from "./rewrite.ts";
import { PUBLIC_TABLES, type TableFamily } from "./tables.ts";
import { fixedIntervalMs, foldTime, timeBounds, type TimeBounds } from "./time-bounds.ts";

/**
 * A function the executing connection registers. SQLite runs native loops that no JavaScript can
 * interrupt; calling back into JavaScript for joined rows lets the query process give up at the
 * deadline by itself and stay in use. SQLite calls it only for rows the rest of the WHERE kept, so
 * it is an early answer, not the guarantee: that is the pool killing the process (process-pool.ts).
 */
export const WATCHDOG_FUNCTION = "tollgate_watchdog";

/**
 * What the caller may read: one workspace and, of each table family, all of it (null), the rows of
 * some key spaces or namespaces (scoped root keys), or nothing (undefined: 403 when a query reads it).
 */
export interface Confinement {
  workspaceId: string;
  keySpaceIds?: readonly string[] | null;
  namespaceIds?: readonly string[] | null;
}

/** Per family: the column its rows are confined by, and the permission that reads it. */
const FAMILY_SCOPE: Record<TableFamily, { key: "keySpaceIds" | "namespaceIds"; column: string; permission: string }> = {
  verifications: { key: "keySpaceIds", column: "key_space_id", permission: "'api.*.read_analytics' or 'api.<apiId>.read_analytics'" },
  ratelimits: { key: "namespaceIds", column: "namespace_id", permission: "'ratelimit.*.read_analytics' or 'ratelimit.<namespaceId>.read_analytics'" },
};

export interface CompiledQuery {
  sql: string;
  params: Array<string | number>;
  /**
   * The result's column names as the caller wrote them, for a dialect that prints names in lower
   * case (and PostgreSQL cuts names at 63 bytes); absent where the query's columns come from a `*`.
   */
  columns?: string[];
}

const CALENDAR_UNIT: Partial<Record<string, [number, "months" | "years"]>> = { MONTH: [1, "months"], QUARTER: [3, "months"], YEAR: [1, "years"] };

/** The expressions that are conditions (booleans in PostgreSQL, 1 or 0 in SQLite). */
/**
 * A positive whole number alone in GROUP BY or ORDER BY names the SELECT's column at that position
 * (in ClickHouse, SQLite and PostgreSQL alike), so it is printed bare: PostgreSQL would read the
 * dialect's typed literal (`1::int8`) as a constant instead.
 */
function positionOf(e: Expr): string | undefined {
  return e.kind === "number" && Number.isSafeInteger(e.value) && e.value > 0 ? String(e.value) : undefined;
}

const CONDITIONS = new Set<Expr["kind"]>(["bool", "not", "logical", "compare", "isNull", "between", "inList", "inQuery", "exists", "like"]);

export function translateQuery(query: Query, confinement: Confinement, nowMs: number, dialect: Dialect = SQLITE): CompiledQuery {
  const printer = new Printer(confinement, nowMs, dialect);
  const compiled: CompiledQuery = { sql: printer.query(query), params: printer.params };
  const columns = dialect.foldsCase ? labels(query.body) : undefined;
  return columns ? { ...compiled, columns } : compiled;
}

/** The labels of a query's columns (its first SELECT's, in a compound), unless one of them is a `*`. */
function labels(body: SetExpr): string[] | undefined {
  while (body.kind === "compound") body = body.left;
  if (body.kind !== "select") return undefined;
  const items = body.select.items;
  return items.every((i) => i.kind === "expr") ? items.map((i) => (i.kind === "expr" ? i.label : "")) : undefined;
}

class Printer implements Emit {
  readonly params: Array<string | number> = [];
  /** What the printer knows of the columns of the sources and queries printed so far. */
  private readonly columns = new ColumnKnowledge();
  /** Where each value is among the parameters, for a dialect that reuses them. */
  private readonly paramNumbers = new Map<string, number>();
  constructor(private readonly confinement: Confinement, readonly nowMs: number, readonly dialect: Dialect) {}

  param(value: string | number): string {
    if (this.dialect.reusesParams) {
      const key = `${typeof value}:${value}`;
      const known = this.paramNumbers.get(key);
      if (known !== undefined) return this.dialect.placeholder(known);
      this.paramNumbers.set(key, this.params.length + 1);
    }
    this.params.push(value);
    return this.dialect.placeholder(this.params.length);
  }

  private quote(name: string): string {
    return this.dialect.quote(name);
  }

  query(q: Query): string {
    const parts: string[] = [];
    if (q.ctes.length > 0) {
      parts.push(`WITH ${q.ctes.map((c) => {
        const sql = `${this.quote(c.name)} AS (${this.query(c.query)})`;
        this.columns.defineCte(c.name, c.query.body);
        return sql;
      }).join(", ")}`);
    }
    parts.push(this.setExpr(q.body));
    if (q.orderBy.length > 0) parts.push(`ORDER BY ${q.orderBy.map((o) => this.orderItem(o, q.body)).join(", ")}`);
    if (q.limit !== undefined) parts.push(`LIMIT ${q.limit}`);
    if (q.offset !== undefined) parts.push(q.limit === undefined ? this.dialect.offsetOnly(q.offset) : `OFFSET ${q.offset}`);
    return parts.join(" ");
  }

  private setExpr(body: SetExpr): string {
    switch (body.kind) {
      case "select": return this.select(body.select);
      case "compound": return this.dialect.compound(this.setExpr(body.left), body.left.kind === "compound", body.op, this.setExpr(body.right));
      // rewrite.ts turns every nested query into a subquery source.
      case "nested": throw new Error("unreachable: nested query after rewrite");
    }
  }

  private select(select: Select): string {
    const s = this.dialect.resolvesAliases ? select : { ...select, ...inlineAliases(select, this.columns.ofSources(select.from)) };
    const items = s.items.map((i) => (i.kind === "all" ? (i.table ? `${this.quote(i.table)}.*` : "*") : `${this.expr(i.expr)} AS ${this.quote(i.label)}`));
    let sql = `SELECT ${s.distinct ? "DISTINCT " : ""}${items.join(", ")}`;
    const sources = s.from as PlannedSource[];
    if (sources.length > 0) sql += ` FROM ${sources.map((src) => this.source(src, timeBounds(s.where, src.alias, sources.length === 1, this.nowMs))).join("")}`;
    const where = [...(s.where ? [this.cond(s.where)] : []), ...(sources.length > 0 && this.dialect.watchdog ? [this.watchdog(sources)] : [])];
    if (where.length > 0) sql += ` WHERE ${where.join(" AND ")}`;
    if (s.groupBy.length > 0) sql += ` GROUP BY ${s.groupBy.map((e) => positionOf(e) ?? this.expr(e)).join(", ")}`;
    if (s.having) sql += ` HAVING ${this.cond(s.having)}`;
    return sql;
  }

  /** References a column of every source, so SQLite evaluates it in the innermost join loop. */
  private watchdog(sources: PlannedSource[]): string {
    return `${WATCHDOG_FUNCTION}(${sources.map((s) => `${this.quote(s.alias)}.${this.quote(s.probe)}`).join(", ")})`;
  }

  /** `bounds`: what the SELECT's WHERE bounds this source's `time` to. */
  private source(src: PlannedSource, bounds: TimeBounds): string {
    const table = `${this.sourceRef(src, bounds)} AS ${this.quote(src.alias)}`;
    const condition = src.on ? ` ON ${this.cond(src.on)}` : src.using ? ` USING (${src.using.map((n) => this.quote(n)).join(", ")})` : "";
    switch (src.join) {
      case "FROM": return table;
      case "COMMA": return `, ${table}`;
      case "CROSS": return ` CROSS JOIN ${table}`;
      case "INNER": return ` JOIN ${table}${condition}`;
      case "LEFT": return ` LEFT JOIN ${table}${condition}`;
    }
  }

  private sourceRef(src: Source, bounds: TimeBounds): string {
    const ref = src.ref;
    switch (ref.kind) {
      case "derived": return `(${this.query(ref.query)})`;
      case "cte": return this.quote(ref.name);
      case "public": return this.confined(ref.table, ref.totals === true, bounds);
      case "table": throw new Error("unreachable: unresolved table after rewrite");
    }
  }

  /**
   * The public table (or its totals) as a subquery over its physical table, limited to what the
   * caller may read, and, for a table stored in batches, to the batches that can hold rows within `bounds`.
   */
  private confined(name: string, totals: boolean, bounds: TimeBounds): string {
    const table = PUBLIC_TABLES.get(name)!;
    const { physical, columns: exposed } = totals && table.totals ? table.totals : table;
    const columns = exposed.map((c) => `${c.sql((name) => this.quote(name))} AS ${this.quote(c.name)}`).join(", ");
    const filters = [`${this.quote("workspace_id")} = ${this.param(this.confinement.workspaceId)}`];
    const scope = FAMILY_SCOPE[table.family];
    const ids = this.confinement[scope.key];
    if (ids === undefined) {
      throw new AppError("insufficient_permissions", { detail: `Missing permission: ${scope.permission} (to read ${name})` });
    }
    if (ids !== null) filters.push(ids.length === 0 ? this.dialect.never : `${this.quote(scope.column)} IN (${ids.map((k) => this.param(k)).join(", ")})`);
    const batch = totals || this.dialect.name !== "sqlite" ? undefined : table.batchBounds;
    // Printed as numbers, as the caller's bounds are: compared with the batch's integer columns alike.
    if (batch && bounds.lowest !== undefined) filters.push(`${this.quote(batch.max)} >= ${this.expr({ kind: "number", value: bounds.lowest })}`);
    if (batch && bounds.highest !== undefined) filters.push(`${this.quote(batch.min)} <= ${this.expr({ kind: "number", value: bounds.highest })}`);
    return `(SELECT ${columns} FROM ${this.dialect.table(physical[this.dialect.name])} WHERE ${filters.join(" AND ")})`;
  }

  /** `body`: the query's, whose columns the item may name. */
  private orderItem(o: OrderItem, body: SetExpr): string {
    // A NULLS clause where no NULL can be would keep PostgreSQL from reading an index in order.
    const fallback = o.nulls ? "" : this.dialect.defaultNulls(o.desc);
    const position = positionOf(o.expr);
    // A position names a column that may hold NULLs, whatever the literal itself is.
    const nulls = o.nulls ? ` NULLS ${o.nulls}` : fallback !== "" && (position !== undefined || !this.columns.neverNull(o.expr, body)) ? fallback : "";
    return `${position ?? this.expr(o.expr)}${o.desc ? " DESC" : ""}${nulls}`;
  }

  /** `e` as a value: in PostgreSQL a condition is selected, compared or added as 1 or 0, as in SQLite. */
  expr(e: Expr): string {
    if (this.dialect.strictBooleans && CONDITIONS.has(e.kind) && e.kind !== "bool") return `CAST(${this.print(e)} AS int4)`;
    return this.print(e);
  }

  /** `e` where a condition is expected: in PostgreSQL a value is true when not 0, as in SQLite. */
  cond(e: Expr): string {
    if (!this.dialect.strictBooleans) return this.print(e);
    if (e.kind === "bool") return this.dialect.condition(e.value);
    return CONDITIONS.has(e.kind) ? this.print(e) : `(${this.print(e)} <> 0)`;
  }

  private print(e: Expr): string {
    switch (e.kind) {
      case "column": return e.table ? `${this.quote(e.table)}.${this.quote(e.name)}` : this.quote(e.name);
      case "string": return this.param(e.value);
      case "number": return this.dialect.number(e.value);
      case "null": return "NULL";
      case "bool": return e.value ? "1" : this.dialect.number(0);
      case "not": return `(NOT ${this.cond(e.expr)})`;
      case "neg": return `(- ${this.expr(e.expr)})`;
      case "logical": return `(${e.terms.map((t) => this.cond(t)).join(` ${e.op} `)})`;
      case "compare": return `(${this.expr(e.left)} ${e.op} ${this.expr(e.right)})`;
      case "arith": return this.arith(e);
      case "isNull": return `(${this.expr(e.expr)} IS ${e.negated ? "NOT " : ""}NULL)`;
      case "between": return `(${this.expr(e.expr)} ${e.negated ? "NOT " : ""}BETWEEN ${this.expr(e.low)} AND ${this.expr(e.high)})`;
      case "inList": return `(${this.expr(e.expr)} ${e.negated ? "NOT " : ""}IN (${e.list.map((x) => this.expr(x)).join(", ")}))`;
      case "inQuery": return `(${this.expr(e.expr)} ${e.negated ? "NOT " : ""}IN (${this.query(e.query)}))`;
      case "exists": return `(${e.negated ? "NOT " : ""}EXISTS (${this.query(e.query)}))`;
      case "subquery": return `(${this.query(e.query)})`;
      case "like": return this.dialect.like(this.expr(e.expr), this.expr(e.pattern), e.negated);
      case "case": return this.caseExpr(e);
      case "call": return translateCall(e, this);
      case "interval": return this.dialect.number(fixedIntervalMs(e));
    }
  }

  private caseExpr(e: Extract<Expr, { kind: "case" }>): string {
    // A simple CASE compares values; a searched one tests conditions.
    const whens = e.whens.map((w) => `WHEN ${e.operand ? this.expr(w.when) : this.cond(w.when)} THEN ${this.expr(w.then)}`).join(" ");
    return `(CASE ${e.operand ? `${this.expr(e.operand)} ` : ""}${whens}${e.else ? ` ELSE ${this.expr(e.else)}` : ""} END)`;
  }

  private arith(e: Extract<Expr, { kind: "arith" }>): string {
    const folded = foldTime(e, this.nowMs);
    if (folded !== undefined) return this.dialect.number(folded);
    const calendar = this.calendarShift(e);
    if (calendar !== undefined) return calendar;
    if (e.op === "/") return this.dialect.divide(this.expr(e.left), this.expr(e.right));
    if (e.op === "%") return this.dialect.modulo(this.expr(e.left), this.expr(e.right));
    return `(${this.expr(e.left)} ${e.op} ${this.expr(e.right)})`;
  }

  /** `t ± INTERVAL n MONTH|QUARTER|YEAR`: calendar arithmetic on Unix ms, through the dialect's date functions. */
  private calendarShift(e: Extract<Expr, { kind: "arith" }>): string | undefined {
    const right = e.right.kind === "interval" ? e.right : undefined;
    const left = e.left.kind === "interval" && e.op === "+" ? e.left : undefined;
    const interval = right ?? left;
    const unit = interval ? CALENDAR_UNIT[interval.unit] : undefined;
    if (!interval || !unit || (e.op !== "+" && e.op !== "-")) return undefined;
    const time = right ? e.left : e.right;
    const simple = time.kind === "column" || time.kind === "number" || (time.kind === "call" && time.args.length === 0);
    return this.dialect.shiftCalendar(this.expr(time), e.op, interval.amount * unit[0], unit[1], simple, this);
  }
}
