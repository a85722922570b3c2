/**
 * The permission query language of key verification: parse once, evaluate against the key's
 * permissions. Grammar: `expr := and (OR and)*`, `and := primary (AND primary)*`,
 * `primary := PERM | '(' expr ')'`; AND/OR are case-insensitive whole words, AND binds tighter.
 *
 * Positions in error details are 0-based indexes into the query. The whole query is tokenised
 * before parsing, so an invalid character is reported before any grammar error and every
 * reported position has only ASCII before it: the index is also the byte offset (upstream's unit).
 * `Missing closing parenthesis` points where the `)` was expected (the offending token, or the
 * query's length at its end); `Empty parentheses` points at the `)` — both as upstream does.
 */
import { AppError } from "../../errors/app-error.ts";

export type PermissionQuery =
  | { readonly kind: "perm"; readonly name: string }
  | { readonly kind: "and"; readonly items: readonly PermissionQuery[] }
  | { readonly kind: "or"; readonly items: readonly PermissionQuery[] };

/** Deeper nesting is a syntax error, so that neither parsing nor evaluation can exhaust the stack. */
export const MAX_QUERY_DEPTH = 100;

type TokenType = "perm" | "and" | "or" | "lparen" | "rparen" | "end";

interface Token {
  type: TokenType;
  text: string;
  pos: number;
}

const EXPECTED_OPERAND = "Expected a permission identifier or opening parenthesis.";

const syntaxError = (detail: string): AppError => new AppError("permissions_query_syntax_error", { detail });

// ASCII only: permission slugs are ASCII, and it keeps positions equal to byte offsets.
function isPermChar(code: number): boolean {
  return (code >= 97 && code <= 122) // a-z
    || (code >= 65 && code <= 90) // A-Z
    || (code >= 48 && code <= 58) // 0-9 and ':'
    || code === 46 || code === 95 || code === 45 || code === 42 || code === 47; // . _ - * /
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

function invalidCharacter(query: string, pos: number): AppError {
  // codePointAt so that a character outside the BMP is shown whole, not as half a surrogate pair.
  const char = String.fromCodePoint(query.codePointAt(pos) ?? 0);
  return syntaxError(
    `Invalid character '${char}' found in query at position ${pos}. `
      + "Permission identifiers may contain letters, digits, '.', '_', '-', ':', '*' and '/'.",
  );
}

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const code = query.charCodeAt(i);
    if (isSpace(code)) {
      i++;
    } else if (code === 40 || code === 41) {
      tokens.push({ type: code === 40 ? "lparen" : "rparen", text: code === 40 ? "(" : ")", pos: i });
      i++;
    } else if (isPermChar(code)) {
      const start = i;
      while (i < query.length && isPermChar(query.charCodeAt(i))) i++;
      // The word is read greedily, so `ANDROID` or `or.read` stay permissions.
      const text = query.slice(start, i);
      const upper = text.toUpperCase();
      tokens.push({ type: upper === "AND" ? "and" : upper === "OR" ? "or" : "perm", text, pos: start });
    } else {
      throw invalidCharacter(query, i);
    }
  }
  tokens.push({ type: "end", text: "", pos: query.length });
  return tokens;
}

/** Recursive descent over the token list; one instance per parse, nothing shared. */
class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  private peek(): Token {
    // tokenize always ends the list with an "end" token and parsing never moves past it.
    return this.tokens[this.index] ?? this.tokens[this.tokens.length - 1]!;
  }

  parseQuery(): PermissionQuery {
    const expr = this.parseOr();
    const rest = this.peek();
    if (rest.type !== "end") {
      throw syntaxError(
        `Unexpected token '${rest.text}' at position ${rest.pos}. The query appears to have extra content after a valid expression.`,
      );
    }
    return expr;
  }

  private parseOr(): PermissionQuery {
    const items = [this.parseAnd()];
    while (this.peek().type === "or") {
      this.index++;
      items.push(this.parseAnd());
    }
    return items.length === 1 ? items[0]! : { kind: "or", items };
  }

  private parseAnd(): PermissionQuery {
    const items = [this.parsePrimary()];
    while (this.peek().type === "and") {
      this.index++;
      items.push(this.parsePrimary());
    }
    return items.length === 1 ? items[0]! : { kind: "and", items };
  }

  private parsePrimary(): PermissionQuery {
    const token = this.peek();
    if (token.type === "perm") {
      this.index++;
      return { kind: "perm", name: token.text };
    }
    if (token.type === "lparen") return this.parseGroup(token);
    if (token.type === "end") throw syntaxError(`Unexpected end of query. ${EXPECTED_OPERAND}`);
    throw syntaxError(`Unexpected token '${token.text}' at position ${token.pos}. ${EXPECTED_OPERAND}`);
  }

  private parseGroup(open: Token): PermissionQuery {
    if (this.depth >= MAX_QUERY_DEPTH) {
      throw syntaxError(
        `Parentheses nested too deeply at position ${open.pos}. A query may nest at most ${MAX_QUERY_DEPTH} levels of parentheses.`,
      );
    }
    this.index++;
    const first = this.peek();
    if (first.type === "rparen") {
      throw syntaxError(`Empty parentheses found at position ${first.pos}. Parentheses must contain at least one permission or expression.`);
    }
    this.depth++;
    const expr = this.parseOr();
    this.depth--;
    const close = this.peek();
    if (close.type !== "rparen") {
      throw syntaxError(
        `Missing closing parenthesis ')' at position ${close.pos}. Every opening parenthesis must have a matching closing parenthesis.`,
      );
    }
    this.index++;
    return expr;
  }
}

/**
 * Parses a permission query into its tree. Throws `AppError("permissions_query_syntax_error")`
 * with the position in the detail; an empty or blank query is a syntax error too.
 */
export function parsePermissionQuery(query: string): PermissionQuery {
  return new Parser(tokenize(query)).parseQuery();
}

/** A key's permissions, indexed once so that each `holds` is a few Set lookups. */
export interface HeldPermissions {
  readonly exact: ReadonlySet<string>;
  /** From each held `p.*`, the prefix `p.` (dot kept): it covers every permission starting with it. */
  readonly prefixes: ReadonlySet<string>;
  /** A held `*`: every permission is covered. */
  readonly all: boolean;
}

/** Indexes names as they come (a large set arrives in slices, services/verification/many-permissions.ts). */
export class HeldBuilder {
  private readonly exact = new Set<string>();
  private readonly prefixes = new Set<string>();
  private all = false;

  add(names: Iterable<string>): void {
    for (const name of names) {
      this.exact.add(name);
      if (name === "*") this.all = true;
      else if (name.endsWith(".*")) this.prefixes.add(name.slice(0, -1));
    }
  }

  build(): HeldPermissions {
    return { exact: this.exact, prefixes: this.prefixes, all: this.all };
  }
}

export function holdPermissions(names: Iterable<string>): HeldPermissions {
  const builder = new HeldBuilder();
  builder.add(names);
  return builder.build();
}

/**
 * Whether the held permissions cover `required`: exact, case-sensitive equality, or a held
 * wildcard above it. A `*` inside `required` is literal: it never widens what is required.
 */
export function holds(held: HeldPermissions, required: string): boolean {
  if (held.all || held.exact.has(required)) return true;
  if (held.prefixes.size === 0) return false;
  // Only the prefixes ending at a dot of `required` can match: one lookup per segment.
  for (let dot = required.indexOf("."); dot !== -1; dot = required.indexOf(".", dot + 1)) {
    if (held.prefixes.has(required.slice(0, dot + 1))) return true;
  }
  return false;
}

/** Evaluates a parsed query; AND and OR stop at the first item that decides them. */
export function evaluatePermissionQuery(query: PermissionQuery, held: HeldPermissions): boolean {
  switch (query.kind) {
    case "perm":
      return holds(held, query.name);
    case "and":
      for (const item of query.items) if (!evaluatePermissionQuery(item, held)) return false;
      return true;
    case "or":
      for (const item of query.items) if (evaluatePermissionQuery(item, held)) return true;
      return false;
  }
}
