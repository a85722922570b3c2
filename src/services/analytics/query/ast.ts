/**
 * Reading sqlparser-rs's AST (serde's JSON shape of Rust enums and structs) without trusting it:
 * every node is checked for fields this module does not understand, and any such field that is
 * set refuses the query. A parser upgrade that adds a clause therefore refuses it until handled.
 */
import { AppError } from "../../../errors/app-error.ts";

export type Node = Record<string, unknown>;

export function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function asNode(v: unknown, where: string): Node {
  if (!isNode(v)) throw unsupported(where);
  return v;
}

export function asArray(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw unsupported(where);
  return v;
}

/** A Rust enum value: `"Variant"` or `{Variant: payload}`. */
export function variant(v: unknown, where: string): [string, unknown] {
  if (typeof v === "string") return [v, undefined];
  const node = asNode(v, where);
  const keys = Object.keys(node);
  if (keys.length !== 1) throw unsupported(where);
  const key = keys[0]!;
  return [key, node[key]];
}

/** A field that is absent or at its default: nothing for this module to look at. */
export function isUnset(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === "None") return true;
  if (Array.isArray(v)) return v.length === 0;
  // An enum variant (PascalCase key, e.g. `{Week: undefined}`) is a choice that was made, even
  // when its payload is empty; a struct (snake_case fields) is unset when all its fields are.
  if (isNode(v)) return Object.entries(v).every(([k, x]) => !/^[A-Z]/.test(k) && isUnset(x));
  return false;
}

/** Fields known to carry source positions or defaults only. */
const IGNORED = new Set(["span", "flavor", "uses_odbc_syntax"]);

/** Refuses the query when `node` sets a field outside `handled`. */
export function refuseExtras(node: Node, handled: readonly string[], where: string): void {
  for (const [key, value] of Object.entries(node)) {
    if (handled.includes(key) || IGNORED.has(key) || key.endsWith("_token")) continue;
    if (!isUnset(value)) throw unsupported(`${where} (${key})`);
  }
}

/** `{value, quote_style?}`: the identifier's text, quotes already removed by the parser. */
export function identText(v: unknown, where: string): string {
  const node = asNode(v, where);
  if (typeof node.value !== "string") throw unsupported(where);
  refuseExtras(node, ["value", "quote_style"], where);
  return node.value;
}

/** An ObjectName: `[{Identifier: ident}, ...]` → the parts' texts. */
export function objectNameParts(v: unknown, where: string): string[] {
  return asArray(v, where).map((part) => {
    const [kind, payload] = variant(part, where);
    if (kind !== "Identifier") throw unsupported(where);
    return identText(payload, where);
  });
}

export function unsupported(what: string): AppError {
  return new AppError("invalid_analytics_query", { detail: `Unsupported SQL: ${what}. The API reference (/docs/api, analytics.getVerifications) lists the supported subset.` });
}
