/**
 * Queries: sqlparser's Query → our Query. One SELECT (CTEs, subqueries, UNION/EXCEPT/INTERSECT of
 * SELECTs allowed); any clause outside the supported subset is refused here, before anything is
 * resolved or emitted. Table names are only collected; rewrite.ts decides what they may be.
 */
import { AppError } from "../../../errors/app-error.ts";
import { asArray, asNode, identText, isUnset, objectNameParts, refuseExtras, unsupported, variant, type Node } from "./ast.ts";
import { convertExpr, nested, type GuardContext } from "./guard-expr.ts";
import type { Cte, Expr, JoinKind, OrderItem, Query, Select, SelectItem, SetExpr, SetOp, Source } from "./ir.ts";
import { exprLabel } from "./label.ts";

/** Converts the parser's top-level Query node. */
export function guardQuery(root: unknown): Query {
  const ctx: GuardContext = { depth: 0, nodes: 0, query: (v) => convertQuery(v, ctx) };
  return convertQuery(root, ctx);
}

function convertQuery(v: unknown, ctx: GuardContext): Query {
  return nested(ctx, () => {
    const node = asNode(v, "query");
    refuseExtras(node, ["with", "body", "order_by", "limit_clause"], "query");
    const query: Query = { ctes: convertWith(node.with, ctx), body: convertSetExpr(node.body, ctx), orderBy: convertOrderBy(node.order_by, ctx) };
    Object.assign(query, convertLimit(node.limit_clause));
    return query;
  });
}

function convertWith(v: unknown, ctx: GuardContext): Cte[] {
  if (isUnset(v)) return [];
  const node = asNode(v, "WITH");
  if (node.recursive === true) throw new AppError("invalid_analytics_query", { detail: "WITH RECURSIVE is not supported." });
  refuseExtras(node, ["recursive", "cte_tables"], "WITH");
  return asArray(node.cte_tables, "WITH").map((c) => {
    const cte = asNode(c, "WITH");
    refuseExtras(cte, ["alias", "query"], "WITH");
    return { name: aliasName(cte.alias, "WITH").toLowerCase(), query: convertQuery(cte.query, ctx) };
  });
}

function convertSetExpr(v: unknown, ctx: GuardContext): SetExpr {
  return nested(ctx, () => {
    const [kind, payload] = variant(v, "query body");
    if (kind === "Select") return { kind: "select", select: convertSelect(asNode(payload, "SELECT"), ctx) };
    if (kind === "Query") {
      // A parenthesised query: keep it nested only when it carries clauses of its own.
      const query = convertQuery(payload, ctx);
      const plain = query.ctes.length === 0 && query.orderBy.length === 0 && query.limit === undefined && query.offset === undefined;
      return plain ? query.body : { kind: "nested", query };
    }
    if (kind === "SetOperation") {
      const node = asNode(payload, "set operation");
      refuseExtras(node, ["left", "op", "right", "set_quantifier"], "set operation");
      return { kind: "compound", op: setOp(node), left: convertSetExpr(node.left, ctx), right: convertSetExpr(node.right, ctx) };
    }
    throw new AppError("invalid_analytics_query_type", { detail: "Only SELECT queries are allowed." });
  });
}

function setOp(node: Node): SetOp {
  const all = node.set_quantifier === "All";
  const distinct = node.set_quantifier === "None" || node.set_quantifier === "Distinct" || node.set_quantifier === undefined;
  if (node.op === "Union" && (all || distinct)) return all ? "UNION ALL" : "UNION";
  if ((node.op === "Except" || node.op === "Intersect") && distinct) return node.op === "Except" ? "EXCEPT" : "INTERSECT";
  throw unsupported(`${String(node.op).toUpperCase()} ${String(node.set_quantifier).toUpperCase()}`);
}

function convertSelect(node: Node, ctx: GuardContext): Select {
  refuseExtras(node, ["distinct", "projection", "from", "selection", "group_by", "having"], "SELECT");
  if (node.distinct !== undefined && node.distinct !== "Distinct") throw unsupported("DISTINCT ON");
  const select: Select = {
    distinct: node.distinct === "Distinct",
    items: asArray(node.projection, "SELECT").map((item) => convertSelectItem(item, ctx)),
    from: convertFrom(node.from, ctx),
    groupBy: convertGroupBy(node.group_by, ctx),
  };
  if (!isUnset(node.selection)) select.where = convertExpr(node.selection, ctx);
  if (!isUnset(node.having)) select.having = convertExpr(node.having, ctx);
  return select;
}

function convertSelectItem(v: unknown, ctx: GuardContext): SelectItem {
  const [kind, payload] = variant(v, "SELECT item");
  if (kind === "Wildcard") {
    refuseExtras(asNode(payload, "*"), [], "*");
    return { kind: "all" };
  }
  if (kind === "QualifiedWildcard") {
    const [target, options] = asArray(payload, "*");
    refuseExtras(asNode(options, "*"), [], "*");
    const [targetKind, name] = variant(target, "*");
    const parts = targetKind === "ObjectName" ? objectNameParts(name, "*") : [];
    if (parts.length !== 1) throw unsupported("qualified '*'");
    return { kind: "all", table: parts[0]!.toLowerCase() };
  }
  if (kind === "ExprWithAlias") {
    const node = asNode(payload, "SELECT item");
    refuseExtras(node, ["expr", "alias"], "SELECT item");
    return { kind: "expr", expr: convertExpr(node.expr, ctx), label: identText(node.alias, "alias") };
  }
  if (kind === "UnnamedExpr") {
    const expr = convertExpr(payload, ctx);
    return { kind: "expr", expr, label: expr.kind === "column" ? expr.name : exprLabel(expr) };
  }
  throw unsupported(`SELECT item ${kind}`);
}

function convertGroupBy(v: unknown, ctx: GuardContext): Expr[] {
  if (isUnset(v)) return [];
  const [kind, payload] = variant(v, "GROUP BY");
  const [exprs, modifiers] = kind === "Expressions" ? asArray(payload, "GROUP BY") : [];
  if (kind !== "Expressions" || !isUnset(modifiers)) throw unsupported("GROUP BY ALL, ROLLUP, CUBE or TOTALS");
  return asArray(exprs, "GROUP BY").map((e) => convertExpr(e, ctx));
}

function convertOrderBy(v: unknown, ctx: GuardContext): OrderItem[] {
  if (isUnset(v)) return [];
  const node = asNode(v, "ORDER BY");
  refuseExtras(node, ["kind"], "ORDER BY");
  const [kind, items] = variant(node.kind, "ORDER BY");
  if (kind !== "Expressions") throw unsupported("ORDER BY ALL");
  return asArray(items, "ORDER BY").map((i) => {
    const item = asNode(i, "ORDER BY");
    // WITH FILL parses to an all-empty struct, so its mere presence refuses the query.
    if (item.with_fill !== undefined && item.with_fill !== null) throw unsupported("ORDER BY ... WITH FILL");
    refuseExtras(item, ["expr", "options"], "ORDER BY");
    // Not isUnset: `asc: false` is a choice (DESC), not a default.
    const options = item.options === undefined || item.options === null ? {} : asNode(item.options, "ORDER BY");
    refuseExtras(options, ["asc", "nulls_first"], "ORDER BY");
    const order: OrderItem = { expr: convertExpr(item.expr, ctx), desc: options.asc === false };
    if (typeof options.nulls_first === "boolean") order.nulls = options.nulls_first ? "FIRST" : "LAST";
    return order;
  });
}

function convertLimit(v: unknown): { limit?: number; offset?: number } {
  if (isUnset(v)) return {};
  const [kind, payload] = variant(v, "LIMIT");
  const node = asNode(payload, "LIMIT");
  if (kind === "OffsetCommaLimit") {
    refuseExtras(node, ["offset", "limit"], "LIMIT");
    return { limit: limitValue(node.limit), offset: limitValue(node.offset) };
  }
  if (kind !== "LimitOffset") throw unsupported("LIMIT");
  refuseExtras(node, ["limit", "offset"], "LIMIT");
  const out: { limit?: number; offset?: number } = {};
  if (!isUnset(node.limit)) out.limit = limitValue(node.limit);
  if (!isUnset(node.offset)) {
    const offset = asNode(node.offset, "OFFSET");
    refuseExtras(offset, ["value", "rows"], "OFFSET");
    out.offset = limitValue(offset.value);
  }
  return out;
}

/** LIMIT and OFFSET take a whole number written in the query. */
function limitValue(v: unknown): number {
  const value = asNode(asNode(v, "LIMIT").Value, "LIMIT (a whole number)");
  const [kind, raw] = variant(value.value, "LIMIT");
  const n = kind === "Number" ? Number(asArray(raw, "LIMIT")[0]) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw unsupported("LIMIT or OFFSET other than a whole number");
  return n;
}

function convertFrom(v: unknown, ctx: GuardContext): Source[] {
  const sources: Source[] = [];
  for (const twj of asArray(v, "FROM")) {
    const node = asNode(twj, "FROM");
    refuseExtras(node, ["relation", "joins"], "FROM");
    sources.push(convertRelation(node.relation, sources.length === 0 ? "FROM" : "COMMA", ctx));
    for (const j of asArray(node.joins, "JOIN")) sources.push(convertJoin(asNode(j, "JOIN"), ctx));
  }
  return sources;
}

function convertJoin(node: Node, ctx: GuardContext): Source {
  refuseExtras(node, ["relation", "join_operator"], "JOIN");
  const [op, constraint] = variant(node.join_operator, "JOIN");
  const kind: JoinKind | undefined = op === "CrossJoin" ? "CROSS"
    : op === "Join" || op === "Inner" ? "INNER"
    : op === "Left" || op === "LeftOuter" ? "LEFT" : undefined;
  if (!kind) throw unsupported(`${op} (use JOIN, LEFT JOIN or CROSS JOIN)`);
  const source = convertRelation(node.relation, kind, ctx);
  if (kind === "CROSS") {
    if (!isUnset(constraint)) throw unsupported("CROSS JOIN with a condition");
    return source;
  }
  const [ckind, cpayload] = variant(constraint, "JOIN condition");
  if (ckind === "On") source.on = convertExpr(cpayload, ctx);
  else if (ckind === "Using") source.using = asArray(cpayload, "USING").map((n) => objectNameParts(n, "USING").join("."));
  else throw unsupported(`${kind} JOIN without ON or USING (use CROSS JOIN)`);
  return source;
}

function convertRelation(v: unknown, join: JoinKind, ctx: GuardContext): Source {
  const [kind, payload] = variant(v, "FROM");
  const node = asNode(payload, "FROM");
  if (kind === "Derived") {
    refuseExtras(node, ["subquery", "alias"], "subquery in FROM");
    return withAlias({ ref: { kind: "derived", query: convertQuery(node.subquery, ctx) }, join }, node.alias);
  }
  if (kind !== "Table") throw new AppError("invalid_analytics_table", { detail: `Access to table '${kind}' is not allowed.` });
  const name = objectNameParts(node.name, "table name").join(".");
  // A table function (numbers(10), pragma_table_info('x')) is a table the caller may not read.
  if (!isUnset(node.args)) throw new AppError("invalid_analytics_table", { detail: `Access to table '${name}' is not allowed.` });
  refuseExtras(node, ["name", "alias"], `table ${name}`);
  return withAlias({ ref: { kind: "table", name: name.toLowerCase() }, join }, node.alias);
}

function withAlias(source: Source, alias: unknown): Source {
  if (!isUnset(alias)) source.alias = aliasName(alias, "alias");
  return source;
}

/** `AS name` without a column list. */
function aliasName(v: unknown, where: string): string {
  const node = asNode(v, where);
  refuseExtras(node, ["name", "explicit"], `${where} (column lists are not supported)`);
  return identText(node.name, where);
}
