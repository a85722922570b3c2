/**
 * A SELECT's own column aliases in its WHERE and HAVING, for PostgreSQL, which (unlike SQLite and
 * ClickHouse) resolves them only as bare names in GROUP BY and ORDER BY: `SELECT SUM(count) AS
 * total … HAVING total > 10` reads `HAVING SUM(count) > 10`. As in SQLite, a name is an alias only
 * where no source of the SELECT has a column of that name (any ASCII case); a SELECT with a source
 * whose columns are not known (a `*` in a subquery) keeps its names as written.
 */
import { lower } from "./dialect.ts";
import type { Expr, Select } from "./ir.ts";

/** `select`'s WHERE and HAVING with aliases replaced; `sourceColumns`: every column its sources have, lower-cased. */
export function inlineAliases(select: Select, sourceColumns: ReadonlySet<string> | undefined): Pick<Select, "where" | "having"> {
  const { where, having } = select;
  if (!sourceColumns) return { where, having };
  const aliases = new Map<string, Expr | null>();
  for (const item of select.items) {
    if (item.kind !== "expr") continue;
    const name = lower(item.label);
    // Two columns of one name: ambiguous, left alone.
    aliases.set(name, aliases.has(name) ? null : item.expr);
  }
  const inline = (e: Expr): Expr => {
    if (e.kind === "column") {
      const alias = e.table === undefined && !sourceColumns.has(lower(e.name)) ? aliases.get(lower(e.name)) : undefined;
      return alias ?? e;
    }
    return mapChildren(e, inline);
  };
  return {
    ...(where ? { where: inline(where) } : {}),
    ...(having ? { having: inline(having) } : {}),
  };
}

/** `e` with `f` applied to its direct sub-expressions; nested queries are their own scopes and stay as they are. */
function mapChildren(e: Expr, f: (e: Expr) => Expr): Expr {
  switch (e.kind) {
    case "not": case "neg": case "isNull": case "inQuery": return { ...e, expr: f(e.expr) };
    case "logical": return { ...e, terms: e.terms.map(f) };
    case "compare": case "arith": return { ...e, left: f(e.left), right: f(e.right) };
    case "between": return { ...e, expr: f(e.expr), low: f(e.low), high: f(e.high) };
    case "inList": return { ...e, expr: f(e.expr), list: e.list.map(f) };
    case "like": return { ...e, expr: f(e.expr), pattern: f(e.pattern) };
    case "case": return {
      ...e, ...(e.operand ? { operand: f(e.operand) } : {}), whens: e.whens.map((w) => ({ when: f(w.when), then: f(w.then) })), ...(e.else ? { else: f(e.else) } : {}),
    };
    case "call": return { ...e, args: e.args.map(f) };
    default: return e;
  }
}
