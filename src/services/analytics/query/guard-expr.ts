/**
 * Expressions: sqlparser's Expr → our Expr. Only the node kinds below pass; functions must be on
 * the allow-list (functions.ts). Literals keep their values, never their source text.
 */
import { AppError } from "../../../errors/app-error.ts";
import { asArray, asNode, identText, isUnset, objectNameParts, refuseExtras, unsupported, variant, type Node } from "./ast.ts";
import { checkCall, isAllowedFunction } from "./functions.ts";
import type { ArithOp, CompareOp, Expr, IntervalUnit, Query } from "./ir.ts";

/** Bounds on the shape of a query, like upstream's AST depth and element limits. */
export const MAX_DEPTH = 100;
export const MAX_NODES = 10_000;

/** Conversion state: depth and size counters, and the query converter (guard-query.ts). */
export interface GuardContext {
  depth: number;
  nodes: number;
  query(v: unknown): Query;
}

const COMPARE: Record<string, CompareOp> = { Eq: "=", DoubleEq: "=", NotEq: "<>", Lt: "<", LtEq: "<=", Gt: ">", GtEq: ">=" };
const ARITH: Record<string, ArithOp> = { Plus: "+", Minus: "-", Multiply: "*", Divide: "/", Modulo: "%" };
const UNITS: Record<string, IntervalUnit> = {
  Second: "SECOND", Minute: "MINUTE", Hour: "HOUR", Day: "DAY", Week: "WEEK", Month: "MONTH", Quarter: "QUARTER", Year: "YEAR",
};

/** Counts one node and one level of nesting around `fn`, refusing queries over the limits. */
export function nested<T>(ctx: GuardContext, fn: () => T): T {
  ctx.nodes += 1;
  if (ctx.nodes > MAX_NODES) throw tooComplex(`more than ${MAX_NODES} elements`);
  if (ctx.depth >= MAX_DEPTH) throw tooComplex(`nested deeper than ${MAX_DEPTH} levels`);
  ctx.depth += 1;
  try {
    return fn();
  } finally {
    ctx.depth -= 1;
  }
}

function tooComplex(why: string): AppError {
  return new AppError("invalid_analytics_query", { detail: `The query is too complex: ${why}.` });
}

export function convertExpr(v: unknown, ctx: GuardContext): Expr {
  return nested(ctx, () => {
    const [kind, payload] = variant(v, "expression");
    switch (kind) {
      case "Identifier": return { kind: "column", name: identText(payload, "identifier") };
      case "CompoundIdentifier": return compoundColumn(payload);
      case "Value": return literal(payload);
      case "Nested": return convertExpr(payload, ctx);
      case "BinaryOp": return binary(asNode(payload, "operator"), ctx);
      case "UnaryOp": return unary(asNode(payload, "operator"), ctx);
      case "IsNull": return { kind: "isNull", negated: false, expr: convertExpr(payload, ctx) };
      case "IsNotNull": return { kind: "isNull", negated: true, expr: convertExpr(payload, ctx) };
      case "Function": return call(asNode(payload, "function"), ctx);
      case "Interval": return interval(asNode(payload, "INTERVAL"));
      default: return predicate(kind, payload, ctx);
    }
  });
}

/** The kinds that test a value: BETWEEN, IN, EXISTS, LIKE, CASE and scalar subqueries. */
function predicate(kind: string, payload: unknown, ctx: GuardContext): Expr {
  if (kind === "Subquery") return { kind: "subquery", query: ctx.query(payload) };
  const node = asNode(payload, kind);
  const negated = node.negated === true;
  switch (kind) {
    case "Between":
      refuseExtras(node, ["expr", "negated", "low", "high"], "BETWEEN");
      return { kind: "between", negated, expr: convertExpr(node.expr, ctx), low: convertExpr(node.low, ctx), high: convertExpr(node.high, ctx) };
    case "InList":
      refuseExtras(node, ["expr", "list", "negated"], "IN");
      return { kind: "inList", negated, expr: convertExpr(node.expr, ctx), list: asArray(node.list, "IN").map((x) => convertExpr(x, ctx)) };
    case "InSubquery":
      refuseExtras(node, ["expr", "subquery", "negated"], "IN");
      return { kind: "inQuery", negated, expr: convertExpr(node.expr, ctx), query: ctx.query(node.subquery) };
    case "Exists":
      refuseExtras(node, ["subquery", "negated"], "EXISTS");
      return { kind: "exists", negated, query: ctx.query(node.subquery) };
    case "Like":
    case "ILike":
      // SQLite's LIKE ignores ASCII case, so ILIKE means the same; ESCAPE and LIKE ANY are refused.
      refuseExtras(node, ["expr", "pattern", "negated"], kind.toUpperCase());
      return { kind: "like", negated, expr: convertExpr(node.expr, ctx), pattern: convertExpr(node.pattern, ctx) };
    case "Case":
      return caseExpr(node, ctx);
    default:
      throw unsupported(`expression ${kind}`);
  }
}

function compoundColumn(payload: unknown): Expr {
  const parts = asArray(payload, "identifier").map((p) => identText(p, "identifier"));
  if (parts.length !== 2) throw unsupported(`column reference '${parts.join(".")}' (use <table>.<column>)`);
  return { kind: "column", table: parts[0]!.toLowerCase(), name: parts[1]! };
}

function literal(payload: unknown): Expr {
  const node = asNode(payload, "literal");
  refuseExtras(node, ["value"], "literal");
  const [kind, value] = variant(node.value, "literal");
  switch (kind) {
    case "Number": return { kind: "number", value: numberValue(asArray(value, "number")[0]) };
    case "SingleQuotedString": return { kind: "string", value: String(value) };
    case "Boolean": return { kind: "bool", value: value === true };
    case "Null": return { kind: "null" };
    default: throw unsupported(`literal ${kind}`);
  }
}

function numberValue(text: unknown): number {
  const n = typeof text === "string" ? Number(text) : Number.NaN;
  if (!Number.isFinite(n)) throw new AppError("invalid_analytics_query", { detail: `Invalid SQL syntax: '${String(text)}' is not a number SQLite can represent.` });
  return n;
}

function binary(node: Node, ctx: GuardContext): Expr {
  refuseExtras(node, ["left", "op", "right"], "operator");
  const op = typeof node.op === "string" ? node.op : "";
  if (op === "And" || op === "Or") {
    const logical = op === "And" ? "AND" : "OR";
    const left = convertExpr(node.left, ctx);
    const right = convertExpr(node.right, ctx);
    // Chains of AND/OR become one flat list, so long filters do not count as deep nesting.
    const terms = [left, right].flatMap((t) => (t.kind === "logical" && t.op === logical ? t.terms : [t]));
    return { kind: "logical", op: logical, terms };
  }
  const compare = COMPARE[op];
  if (compare) return { kind: "compare", op: compare, left: convertExpr(node.left, ctx), right: convertExpr(node.right, ctx) };
  const arith = ARITH[op];
  if (arith) return { kind: "arith", op: arith, left: convertExpr(node.left, ctx), right: convertExpr(node.right, ctx) };
  throw unsupported(`operator ${op || "?"}`);
}

function unary(node: Node, ctx: GuardContext): Expr {
  refuseExtras(node, ["op", "expr"], "operator");
  const inner = convertExpr(node.expr, ctx);
  switch (node.op) {
    case "Not": return { kind: "not", expr: inner };
    case "Plus": return inner;
    case "Minus": return inner.kind === "number" ? { kind: "number", value: -inner.value } : { kind: "neg", expr: inner };
    default: throw unsupported(`operator ${String(node.op)}`);
  }
}

function caseExpr(node: Node, ctx: GuardContext): Expr {
  refuseExtras(node, ["operand", "conditions", "else_result"], "CASE");
  const whens = asArray(node.conditions, "CASE").map((c) => {
    const when = asNode(c, "CASE");
    refuseExtras(when, ["condition", "result"], "CASE");
    return { when: convertExpr(when.condition, ctx), then: convertExpr(when.result, ctx) };
  });
  return {
    kind: "case", whens,
    ...(isUnset(node.operand) ? {} : { operand: convertExpr(node.operand, ctx) }),
    ...(isUnset(node.else_result) ? {} : { else: convertExpr(node.else_result, ctx) }),
  };
}

function call(node: Node, ctx: GuardContext): Expr {
  refuseExtras(node, ["name", "args"], "function call");
  const parts = objectNameParts(node.name, "function name");
  const name = parts.join(".");
  if (parts.length !== 1 || !isAllowedFunction(name)) {
    throw new AppError("invalid_analytics_function", { detail: `Function '${name}' is not allowed.` });
  }
  const [argsKind, argsPayload] = variant(node.args, "function arguments");
  const list: Node = argsKind === "List" ? asNode(argsPayload, "function arguments") : { args: [] };
  if (argsKind !== "List" && argsKind !== "None") throw unsupported(`arguments of ${name}`);
  refuseExtras(list, ["args", "duplicate_treatment"], `arguments of ${name}`);
  let star = false;
  const args: Expr[] = [];
  for (const arg of asArray(list.args, `arguments of ${name}`)) {
    const [argKind, argPayload] = variant(arg, `arguments of ${name}`);
    const [exprKind, expr] = argKind === "Unnamed" ? variant(argPayload, `arguments of ${name}`) : ["", undefined];
    if (exprKind === "Wildcard") star = true;
    else if (exprKind === "Expr") args.push(convertExpr(expr, ctx));
    else throw unsupported(`arguments of ${name}`);
  }
  const result: Expr = { kind: "call", name, key: name.toLowerCase(), args, star, distinct: list.duplicate_treatment === "Distinct" };
  checkCall(result);
  return result;
}

function interval(node: Node): Expr {
  refuseExtras(node, ["value", "leading_field"], "INTERVAL");
  const amount = convertIntervalAmount(node.value);
  const [field] = node.leading_field === undefined || node.leading_field === null ? [""] : variant(node.leading_field, "INTERVAL unit");
  const unit = UNITS[field];
  if (!unit) throw unsupported(`INTERVAL unit ${field || "(none)"}; use SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR`);
  return { kind: "interval", amount, unit };
}

/** `INTERVAL 7 DAY` or `INTERVAL '7' DAY`: a whole number of units. */
function convertIntervalAmount(v: unknown): number {
  const value = asNode(asNode(v, "INTERVAL").Value, "INTERVAL");
  const [kind, raw] = variant(value.value, "INTERVAL");
  const text = kind === "Number" ? asArray(raw, "INTERVAL")[0] : kind === "SingleQuotedString" ? raw : undefined;
  const n = typeof text === "string" && /^\s*\d{1,9}\s*$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw unsupported("INTERVAL amount (a whole number from 0 to 999999999)");
  return n;
}
