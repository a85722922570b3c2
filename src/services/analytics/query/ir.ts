/**
 * The analytics query as tollgate understands it: the only shapes a caller's SQL can take once it
 * has passed the guard. Anything the parser accepts but this model cannot express is refused, so
 * the SQL we emit (translate.ts) can only contain constructs listed here.
 */

export interface Query {
  ctes: Cte[];
  body: SetExpr;
  orderBy: OrderItem[];
  limit?: number;
  offset?: number;
}

export interface Cte {
  /** Lower-cased, as SQLite compares table names case-insensitively. */
  name: string;
  query: Query;
}

export type SetOp = "UNION" | "UNION ALL" | "EXCEPT" | "INTERSECT";

export type SetExpr =
  | { kind: "select"; select: Select }
  | { kind: "compound"; op: SetOp; left: SetExpr; right: SetExpr }
  /** A parenthesised query with its own ORDER BY / LIMIT, or WITH, inside a compound. */
  | { kind: "nested"; query: Query };

export interface Select {
  distinct: boolean;
  items: SelectItem[];
  from: Source[];
  where?: Expr;
  groupBy: Expr[];
  having?: Expr;
}

export type SelectItem =
  | { kind: "all"; table?: string }
  /** `label` is the output column name: the alias, the column name, or the expression's text. */
  | { kind: "expr"; expr: Expr; label: string };

export type JoinKind = "FROM" | "COMMA" | "INNER" | "LEFT" | "CROSS";

export interface Source {
  ref: SourceRef;
  /** The name the rest of the query uses for this source (alias, else the table name). */
  alias?: string;
  join: JoinKind;
  on?: Expr;
  using?: string[];
}

export type SourceRef =
  /** A table name as written (lower-cased); rewrite.ts resolves it to a CTE or a public table. */
  | { kind: "table"; name: string }
  /** `totals`: read the table's totals instead (totals.ts decided it gives the same answer). */
  | { kind: "public"; table: string; totals?: boolean }
  | { kind: "cte"; name: string }
  | { kind: "derived"; query: Query };

export interface OrderItem {
  expr: Expr;
  desc: boolean;
  nulls?: "FIRST" | "LAST";
}

export type CompareOp = "=" | "<>" | "<" | "<=" | ">" | ">=";
export type ArithOp = "+" | "-" | "*" | "/" | "%";

export type IntervalUnit = "SECOND" | "MINUTE" | "HOUR" | "DAY" | "WEEK" | "MONTH" | "QUARTER" | "YEAR";

export type Expr =
  | { kind: "column"; table?: string; name: string }
  | { kind: "string"; value: string }
  | { kind: "number"; value: number }
  | { kind: "null" }
  | { kind: "bool"; value: boolean }
  | { kind: "not"; expr: Expr }
  | { kind: "neg"; expr: Expr }
  | { kind: "logical"; op: "AND" | "OR"; terms: Expr[] }
  | { kind: "compare"; op: CompareOp; left: Expr; right: Expr }
  | { kind: "arith"; op: ArithOp; left: Expr; right: Expr }
  | { kind: "isNull"; negated: boolean; expr: Expr }
  | { kind: "between"; negated: boolean; expr: Expr; low: Expr; high: Expr }
  | { kind: "inList"; negated: boolean; expr: Expr; list: Expr[] }
  | { kind: "inQuery"; negated: boolean; expr: Expr; query: Query }
  | { kind: "exists"; negated: boolean; query: Query }
  | { kind: "subquery"; query: Query }
  | { kind: "like"; negated: boolean; expr: Expr; pattern: Expr }
  | { kind: "case"; operand?: Expr; whens: Array<{ when: Expr; then: Expr }>; else?: Expr }
  /** `name` as written; `key` is its lower-cased form, looked up in functions.ts. */
  | { kind: "call"; name: string; key: string; args: Expr[]; star: boolean; distinct: boolean }
  | { kind: "interval"; amount: number; unit: IntervalUnit };

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
