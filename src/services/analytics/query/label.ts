/**
 * Output column names for unaliased expressions: the expression written back in the caller's own
 * terms (`SUM(count)`, `sumIf(count, outcome = 'VALID')`), not in the SQLite it becomes. Only used
 * as a name, never as SQL.
 */
import type { Expr } from "./ir.ts";

const INTERVAL_LABEL = (e: Extract<Expr, { kind: "interval" }>) => `INTERVAL ${e.amount} ${e.unit}`;

export function exprLabel(e: Expr): string {
  switch (e.kind) {
    case "column": return e.table ? `${e.table}.${e.name}` : e.name;
    case "string": return `'${e.value.replaceAll("'", "\\'")}'`;
    case "number": return String(e.value);
    case "null": return "NULL";
    case "bool": return e.value ? "true" : "false";
    case "not": return `NOT ${exprLabel(e.expr)}`;
    case "neg": return `-${exprLabel(e.expr)}`;
    case "logical": return e.terms.map(exprLabel).join(` ${e.op} `);
    case "compare":
    case "arith": return `${exprLabel(e.left)} ${e.op} ${exprLabel(e.right)}`;
    case "isNull": return `${exprLabel(e.expr)} IS ${e.negated ? "NOT " : ""}NULL`;
    case "between": return `${exprLabel(e.expr)} ${e.negated ? "NOT " : ""}BETWEEN ${exprLabel(e.low)} AND ${exprLabel(e.high)}`;
    case "inList": return `${exprLabel(e.expr)} ${e.negated ? "NOT " : ""}IN (${e.list.map(exprLabel).join(", ")})`;
    case "inQuery": return `${exprLabel(e.expr)} ${e.negated ? "NOT " : ""}IN (subquery)`;
    case "exists": return `${e.negated ? "NOT " : ""}EXISTS (subquery)`;
    case "subquery": return "(subquery)";
    case "like": return `${exprLabel(e.expr)} ${e.negated ? "NOT " : ""}LIKE ${exprLabel(e.pattern)}`;
    case "case": return "CASE";
    case "call": return `${e.name}(${e.distinct ? "DISTINCT " : ""}${e.star ? "*" : e.args.map(exprLabel).join(", ")})`;
    case "interval": return INTERVAL_LABEL(e);
  }
}
