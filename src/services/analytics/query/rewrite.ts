/**
 * Resolution and confinement planning on the guarded query:
 * - every table name becomes either a CTE defined in an enclosing WITH (lexical scope, earlier
 *   CTEs only) or one of the public tables; anything else is 400 `invalid_analytics_table`;
 * - CTEs get generated names (`tg_cte_<n>`), so no name we emit can ever reach a real table;
 * - every source gets an alias and a `probe` column for the watchdog (translate.ts);
 * - a SELECT over a rollup reads its totals table instead where totals.ts shows that is the same;
 * - parenthesised arms become `SELECT * FROM (...)`; the top LIMIT is added or lowered.
 */
import { AppError } from "../../../errors/app-error.ts";
import { children, type Expr, type OrderItem, type Query, type Select, type SetExpr, type Source } from "./ir.ts";
import { PUBLIC_TABLES } from "./tables.ts";
import { totalsCanServe } from "./totals.ts";

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
    q.body = this.setExpr(q.body, scope, q.orderBy);
    for (const item of q.orderBy) this.expr(item.expr, scope);
  }

  /** `orderBy`: the enclosing query's, which may name the columns of a SELECT that is its whole body. */
  private setExpr(body: SetExpr, scope: Scope, orderBy: readonly OrderItem[] = []): SetExpr {
    switch (body.kind) {
      case "select":
        this.select(body.select, scope, orderBy);
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

  private select(select: Select, scope: Scope, orderBy: readonly OrderItem[]): void {
    for (const source of select.from) this.source(source, scope);
    for (const source of select.from) if (source.on) this.expr(source.on, scope);
    for (const item of select.items) if (item.kind === "expr") this.expr(item.expr, scope);
    for (const e of [select.where, ...select.groupBy, select.having]) if (e) this.expr(e, scope);
    const only = select.from[0];
    if (only?.ref.kind === "public" && PUBLIC_TABLES.get(only.ref.table)?.totals && totalsCanServe(select, orderBy)) only.ref.totals = true;
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
