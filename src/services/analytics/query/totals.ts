/**
 * When a SELECT over a rollup may read the rollup's totals table (per bucket, key space and
 * outcome) instead of the rollup itself (per key, identity, outcome and tags) without changing its
 * answer, so that a year of a workspace's or an API's counts reads a few hundred rows instead of
 * one per key and day. Every rule errs towards the rollup:
 * - the SELECT reads exactly one source, and aggregates (GROUP BY, DISTINCT or an aggregate), so
 *   the number of rows it reads does not show;
 * - it names no column the totals lack (key_id, identity_id, external_id, tags, latency_avg),
 *   nested queries included, since they may refer to its columns;
 * - `count` and `spent_credits` appear only as what sum or sumIf adds up: a sum over the totals
 *   equals the sum over the rollup, no other function of them does;
 * - nothing counts or averages rows (count, countIf, avg); count(DISTINCT), uniq, min and max of
 *   the columns the totals keep see the same values either way.
 */
import { children, type Expr, type OrderItem, type Query, type Select, type SetExpr, type Source } from "./ir.ts";

/** Rollup columns whose values the totals carry (summed, for these two). */
const SUMMED = new Set(["count", "spent_credits"]);
/** Rollup columns the totals do not have. */
const DROPPED = new Set(["key_id", "identity_id", "external_id", "tags", "latency_avg"]);
/** Aggregates that depend on the set of values only, not on how many rows hold them. */
const SET_AGGREGATES = new Set(["min", "max", "uniq", "uniqexact"]);
/** Aggregates that depend on the number of rows (count(DISTINCT x) aside). */
const ROW_AGGREGATES = new Set(["count", "countif", "avg"]);

interface Walk {
  aggregates: boolean;
}

/** Whether `select`, reading one rollup, gives the same answer over its totals table. `orderBy`: its query's, when `select` is that query's body. */
export function totalsCanServe(select: Select, orderBy: readonly OrderItem[]): boolean {
  if (select.from.length !== 1 || select.items.some((i) => i.kind === "all")) return false;
  const walk: Walk = { aggregates: false };
  const exprs = [
    ...select.items.flatMap((i) => (i.kind === "expr" ? [i.expr] : [])),
    ...(select.where ? [select.where] : []), ...select.groupBy, ...(select.having ? [select.having] : []), ...orderBy.map((o) => o.expr),
  ];
  if (!exprs.every((e) => allowed(e, walk))) return false;
  return select.distinct || select.groupBy.length > 0 || walk.aggregates;
}

function kept(name: string): boolean {
  const lower = name.toLowerCase();
  return !SUMMED.has(lower) && !DROPPED.has(lower);
}

function allowed(e: Expr, walk: Walk): boolean {
  switch (e.kind) {
    case "column": return kept(e.name);
    case "call": return allowedCall(e, walk);
    case "inQuery": return allowed(e.expr, walk) && namesIn(e.query).every(kept);
    case "exists":
    case "subquery": return namesIn(e.query).every(kept);
    default: return children(e).every((c) => allowed(c, walk));
  }
}

function allowedCall(e: Extract<Expr, { kind: "call" }>, walk: Walk): boolean {
  if (e.key === "sum" || e.key === "sumif") {
    walk.aggregates = true;
    const [summed, ...condition] = e.args;
    return !e.distinct && summed?.kind === "column" && SUMMED.has(summed.name.toLowerCase()) && condition.every((c) => allowed(c, walk));
  }
  const counted = ROW_AGGREGATES.has(e.key) && !(e.key === "count" && e.distinct && !e.star);
  if (counted) return false;
  if (SET_AGGREGATES.has(e.key) || e.key === "count") walk.aggregates = true;
  return e.args.every((c) => allowed(c, walk));
}

/** Every column name a query mentions anywhere, its nested queries included. */
function namesIn(q: Query): string[] {
  const names: string[] = [];
  const expr = (e: Expr): void => {
    if (e.kind === "column") names.push(e.name);
    if (e.kind === "inQuery" || e.kind === "exists" || e.kind === "subquery") query(e.query);
    children(e).forEach(expr);
  };
  const source = (s: Source): void => {
    if (s.ref.kind === "derived") query(s.ref.query);
    if (s.on) expr(s.on);
    names.push(...(s.using ?? []));
  };
  const body = (b: SetExpr): void => {
    if (b.kind === "compound") [b.left, b.right].forEach(body);
    else if (b.kind === "nested") query(b.query);
    else {
      const s = b.select;
      s.from.forEach(source);
      s.items.forEach((i) => { if (i.kind === "expr") expr(i.expr); });
      [s.where, ...s.groupBy, s.having].forEach((e) => { if (e) expr(e); });
    }
  };
  const query = (x: Query): void => {
    x.ctes.forEach((c) => query(c.query));
    body(x.body);
    x.orderBy.forEach((o) => expr(o.expr));
  };
  query(q);
  return names;
}
