/**
 * What the translator knows of the columns a source or a query has: their names (lower-cased, as
 * SQLite compares them), so that a SELECT's aliases can be told from its sources' columns
 * (aliases.ts), and whether an ORDER BY names a column that is never NULL, so that PostgreSQL needs
 * no NULLS clause to sort as SQLite does and can read an index in order. Unknown (a `*` over a
 * subquery whose columns are unknown, a compound) always errs towards the safe answer: undefined, or "may be NULL".
 */
import { lower } from "./dialect.ts";
import type { Expr, SetExpr, Source } from "./ir.ts";
import type { PlannedSource } from "./rewrite.ts";
import { PUBLIC_TABLES } from "./tables.ts";

export class ColumnKnowledge {
  /** The columns of each CTE printed so far (by its internal name); undefined where unknown. */
  private readonly ctes = new Map<string, ReadonlySet<string> | undefined>();

  defineCte(name: string, body: SetExpr): void {
    this.ctes.set(name, this.ofQuery(body));
  }

  /** Every column name of `sources`; undefined when one's columns are not known. */
  ofSources(sources: readonly Source[]): ReadonlySet<string> | undefined {
    const names = new Set<string>();
    for (const src of sources) {
      const columns = this.ofSource(src);
      if (!columns) return undefined;
      for (const name of columns) names.add(name);
    }
    return names;
  }

  /** The column names a query returns (its first SELECT's); undefined where not known. */
  ofQuery(body: SetExpr): ReadonlySet<string> | undefined {
    while (body.kind === "compound") body = body.left;
    if (body.kind !== "select") return undefined;
    const sources = body.select.from as PlannedSource[];
    const names = new Set<string>();
    for (const item of body.select.items) {
      if (item.kind === "expr") {
        names.add(lower(item.label));
        continue;
      }
      const table = item.table;
      const columns = this.ofSources(table === undefined ? sources : sources.filter((s) => lower(s.alias) === lower(table)));
      if (!columns) return undefined;
      for (const name of columns) names.add(name);
    }
    return names;
  }

  /**
   * Whether `e`, an ORDER BY item of a query whose body is `body`, is surely never NULL: a column
   * (or an alias of one) of a public table read by the body's only SELECT, not on the optional
   * side of a LEFT JOIN. Every public column is NOT NULL.
   */
  neverNull(e: Expr, body: SetExpr): boolean {
    if (body.kind !== "select" || e.kind !== "column") return false;
    const select = body.select;
    const sources = select.from as PlannedSource[];
    let column: Extract<Expr, { kind: "column" }> = e;
    if (column.table === undefined) {
      const aliased = select.items.find((i) => i.kind === "expr" && lower(i.label) === lower(column.name));
      if (aliased?.kind === "expr") {
        if (aliased.expr.kind !== "column") return false;
        column = aliased.expr;
      }
    }
    const table = column.table;
    const candidates = table === undefined
      ? sources.filter((s) => this.ofSource(s)?.has(lower(column.name)) ?? true)
      : sources.filter((s) => lower(s.alias) === lower(table));
    const [source] = candidates;
    return candidates.length === 1 && source!.ref.kind === "public" && source!.join !== "LEFT"
      && (this.ofSource(source!)?.has(lower(column.name)) ?? false);
  }

  private ofSource(src: Source): ReadonlySet<string> | undefined {
    switch (src.ref.kind) {
      case "public": {
        const table = PUBLIC_TABLES.get(src.ref.table)!;
        const columns = src.ref.totals && table.totals ? table.totals.columns : table.columns;
        return new Set(columns.map((c) => c.name));
      }
      case "cte": return this.ctes.get(src.ref.name);
      case "derived": return this.ofQuery(src.ref.query.body);
      case "table": return undefined;
    }
  }
}
