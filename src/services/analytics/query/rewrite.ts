/**
 * Resolution and confinement planning on the guarded query:
 * - every table name becomes either a CTE defined in an enclosing WITH (lexical scope, earlier
 *   CTEs only) or one of the public tables; anything else is 400 `invalid_analytics_table`;
 * - CTEs get generated names (`tg_cte_<n>`), so no name we emit can ever reach a real table;
 * - every source gets an alias and a `probe` column for the watchdog (translate.ts);
 * - parenthesised arms become `SELECT * FROM (...)`; the top LIMIT is added or lowered.
 */
import { AppError } from "../../../errors/app-error.ts";
import type { Expr, Query, Select, SetExpr, Source } from "./ir.ts";
import { PUBLIC_TABLES } from "./tables.ts";

export interface RewriteOptions {
  /** Rows a query may return; the top-level LIMIT is set to at most this. */
  maxRows: number;
}

interface CteEntry {
  internal: string;
  query: Query;
}

class Scope {
  private readonly ctes = new Map<string, CteEntry>();
  constructor(private readonly parent?: Scope) {}

  lookup(name: string): CteEntry | undefined {
    return this.ctes.get(name) ?? this.parent?.lookup(name);
  }

  define(name: string, entry: CteEntry): void {
    this.ctes.set(name, entry);
  }
}

/** A source's alias, the name of a column it surely has, for the watchdog. */
export type PlannedSource = Source & { alias: string; probe: string };

export function rewriteQuery(query: Query, opts: RewriteOptions): Query {
  const rewriter = new Rewriter();
  rewriter.query(query, new Scope());
  requireFrom(query.body);
  query.limit = Math.min(query.limit ?? opts.maxRows, opts.maxRows);
  return query;
}

/** Upstream refuses a query that reads no table; so do we, for each arm of the top level. */
function requireFrom(body: SetExpr): void {
  if (body.kind === "compound") {
    requireFrom(body.left);
    requireFrom(body.right);
  } else if (body.kind === "select" && body.select.from.length === 0) {
    throw new AppError("invalid_analytics_query", { detail: "The query must read FROM one of the analytics tables." });
  }
}

class Rewriter {
  private counter = 0;

  query(q: Query, outer: Scope): void {
    const scope = new Scope(outer);
    for (const cte of q.ctes) {
      // The body sees the CTEs before it, not itself: no recursion, whatever SQLite would allow.
      this.query(cte.query, scope);
      const internal = `tg_cte_${++this.counter}`;
      scope.define(cte.name, { internal, query: cte.query });
      cte.name = internal;
    }
    q.body = this.setExpr(q.body, scope);
    for (const item of q.orderBy) this.expr(item.expr, scope);
  }

  private setExpr(body: SetExpr, scope: Scope): SetExpr {
    switch (body.kind) {
      case "select":
        this.select(body.select, scope);
        return body;
      case "nested":
        return this.setExpr(this.wrap(body.query), scope);
      case "compound":
        body.left = this.setExpr(body.left, scope);
        // SQLite chains compound operators left to right; a grouped right arm keeps its meaning
        // only as a subquery.
        body.right = this.setExpr(body.right.kind === "compound" ? this.wrap({ ctes: [], body: body.right, orderBy: [] }) : body.right, scope);
        return body;
    }
  }

  /** `SELECT * FROM (<query>)`. */
  private wrap(query: Query): SetExpr {
    const source: Source = { ref: { kind: "derived", query }, alias: `tg_subquery_${++this.counter}`, join: "FROM" };
    return { kind: "select", select: { distinct: false, items: [{ kind: "all" }], from: [source], groupBy: [] } };
  }

  private select(select: Select, scope: Scope): void {
    for (const source of select.from) this.source(source, scope);
    for (const source of select.from) if (source.on) this.expr(source.on, scope);
    for (const item of select.items) if (item.kind === "expr") this.expr(item.expr, scope);
    for (const e of [select.where, ...select.groupBy, select.having]) if (e) this.expr(e, scope);
  }

  private source(source: Source, scope: Scope): void {
    const planned = source as PlannedSource;
    const ref = source.ref;
    if (ref.kind === "derived") {
      this.query(ref.query, scope);
      planned.alias ??= `tg_subquery_${++this.counter}`;
      planned.probe = firstColumn(ref.query);
      return;
    }
    if (ref.kind !== "table") return;
    const cte = scope.lookup(ref.name);
    planned.alias ??= ref.name;
    if (cte) {
      source.ref = { kind: "cte", name: cte.internal };
      planned.probe = firstColumn(cte.query);
      return;
    }
    const table = PUBLIC_TABLES.get(ref.name);
    if (!table) throw new AppError("invalid_analytics_table", { detail: `Access to table '${ref.name}' is not allowed.` });
    source.ref = { kind: "public", table: table.name };
    planned.probe = "time";
  }

  private expr(e: Expr, scope: Scope): void {
    if (e.kind === "inQuery" || e.kind === "exists" || e.kind === "subquery") this.query(e.query, scope);
    for (const child of children(e)) this.expr(child, scope);
  }
}

/** The direct sub-expressions of `e` (subqueries are walked separately). */
export function children(e: Expr): Expr[] {
  switch (e.kind) {
    case "not": case "neg": case "isNull": return [e.expr];
    case "logical": return e.terms;
    case "compare": case "arith": return [e.left, e.right];
    case "between": return [e.expr, e.low, e.high];
    case "inList": return [e.expr, ...e.list];
    case "inQuery": return [e.expr];
    case "like": return [e.expr, e.pattern];
    case "case": return [...(e.operand ? [e.operand] : []), ...e.whens.flatMap((w) => [w.when, w.then]), ...(e.else ? [e.else] : [])];
    case "call": return e.args;
    default: return [];
  }
}

/** The name of the first column a query returns (after rewrite has planned its sources). */
function firstColumn(q: Query): string {
  let body = q.body;
  while (body.kind === "compound") body = body.left;
  if (body.kind === "nested") return firstColumn(body.query);
  const first = body.select.items[0];
  if (first?.kind === "expr") return first.label;
  const sources = body.select.from as PlannedSource[];
  const source = first?.table === undefined ? sources[0] : sources.find((s) => s.alias.toLowerCase() === first.table);
  if (!source) throw new AppError("invalid_analytics_query", { detail: "A '*' in a subquery must refer to a table of that subquery." });
  if (source.ref.kind === "public") return PUBLIC_TABLES.get(source.ref.table)!.columns[0]!.name;
  return source.probe;
}
