/**
 * v1's permission query, a JSON object (`"perm"`, `{and: [...]}`, `{or: [...]}`), written as the
 * text query v2 takes, so that the verification service parses and evaluates one language. Each
 * permission is checked to be one word of v2's query (no spaces, parentheses or a bare AND/OR), so
 * a v1 name can never turn into an operator; anything else is the same 400 a malformed v2 query is.
 */
import { AppError } from "../../errors/app-error.ts";

/** v2's bound on its `permissions` text (routes/v2/keys/verifyKey.ts): the written query stays within it. */
export const MAX_QUERY_TEXT = 1000;

/** The characters of one v2 permission identifier (services/verification/permission-query.ts). */
const PERMISSION = /^[A-Za-z0-9._:*/-]+$/;

const syntaxError = (detail: string): AppError => new AppError("permissions_query_syntax_error", { detail });

/** The v2 text of a v1 query; 400 `permissions_query_syntax_error` for a malformed one. Depth is bounded by the body's (http/body.ts). */
export function v1QueryText(query: unknown): string {
  const text = write(query);
  if (text.length > MAX_QUERY_TEXT) throw syntaxError(`The permission query is longer than ${MAX_QUERY_TEXT} characters once written as a query string.`);
  return text;
}

function write(query: unknown): string {
  if (typeof query === "string") {
    const upper = query.toUpperCase();
    if (!PERMISSION.test(query) || upper === "AND" || upper === "OR") {
      throw syntaxError(`'${query.slice(0, 100)}' is not a permission: permissions are letters, digits, '.', '_', '-', ':', '*' and '/'.`);
    }
    return query;
  }
  if (query === null || typeof query !== "object" || Array.isArray(query)) {
    throw syntaxError("A permission query is a permission name, {\"and\": [...]} or {\"or\": [...]}.");
  }
  const keys = Object.keys(query);
  const operator = keys.length === 1 ? keys[0] : undefined;
  const operands = operator === "and" || operator === "or" ? (query as Record<string, unknown>)[operator] : undefined;
  if (!Array.isArray(operands)) throw syntaxError("A permission query object has exactly one key, \"and\" or \"or\", whose value is an array.");
  if (operands.length === 0) throw syntaxError(`"${operator}" must contain at least one permission or expression.`);
  return `(${operands.map(write).join(operator === "and" ? " AND " : " OR ")})`;
}
