/** The permission query language: the syntax errors, each naming what went wrong and where, and the nesting cap. */
import { describe, expect, test } from "bun:test";
import { MAX_QUERY_DEPTH, parsePermissionQuery } from "../../../src/services/verification/permission-query.ts";
import { allowed, perm, syntaxDetail } from "./permission-query.support.ts";

const EXPECTED_OPERAND = "Expected a permission identifier or opening parenthesis.";
const EXTRA = "The query appears to have extra content after a valid expression.";
const ALLOWED_CHARS = "Permission identifiers may contain letters, digits, '.', '_', '-', ':', '*' and '/'.";

describe("syntax errors: unexpected end", () => {
  const detail = `Unexpected end of query. ${EXPECTED_OPERAND}`;

  test.each(["", "   ", "\t\n"])("empty or blank query %j", (query) => {
    expect(syntaxDetail(query)).toBe(detail);
  });

  test.each(["a AND", "a OR", "a AND b OR", "(a AND", "a AND   ", "("])("query ending where an operand is due %j", (query) => {
    expect(syntaxDetail(query)).toBe(detail);
  });
});

describe("syntax errors: missing closing parenthesis", () => {
  const missing = (pos: number): string =>
    `Missing closing parenthesis ')' at position ${pos}. Every opening parenthesis must have a matching closing parenthesis.`;

  test("at the end of the query, the position is the query's length", () => {
    expect(syntaxDetail("(a AND b")).toBe(missing(8));
    expect(syntaxDetail("(permission_1 AND permission_2")).toBe(missing(30));
  });

  test("trailing whitespace counts in the length", () => {
    expect(syntaxDetail("(a  ")).toBe(missing(4));
  });

  test("the innermost unclosed group is reported", () => {
    expect(syntaxDetail("((a OR b) AND (c")).toBe(missing(16));
  });

  test("another token where ')' was expected: its position", () => {
    expect(syntaxDetail("(a b)")).toBe(missing(3));
    expect(syntaxDetail("(a (b))")).toBe(missing(3));
  });
});

describe("syntax errors: empty parentheses", () => {
  const empty = (pos: number): string =>
    `Empty parentheses found at position ${pos}. Parentheses must contain at least one permission or expression.`;

  test("the position is that of the ')'", () => {
    expect(syntaxDetail("()")).toBe(empty(1));
    expect(syntaxDetail("permission_1 AND ()")).toBe(empty(18));
    expect(syntaxDetail("a OR ( )")).toBe(empty(7));
  });

  test("nested empty parentheses report the inner pair", () => {
    expect(syntaxDetail("(())")).toBe(empty(2));
  });
});

describe("syntax errors: unexpected token where an operand is expected", () => {
  const unexpected = (text: string, pos: number): string =>
    `Unexpected token '${text}' at position ${pos}. ${EXPECTED_OPERAND}`;

  test("the query starts with an operator, in its original case", () => {
    expect(syntaxDetail("AND permission_1")).toBe(unexpected("AND", 0));
    expect(syntaxDetail("or a")).toBe(unexpected("or", 0));
    expect(syntaxDetail("  Or a")).toBe(unexpected("Or", 2));
  });

  test("two operators in a row", () => {
    expect(syntaxDetail("a AND AND b")).toBe(unexpected("AND", 6));
    expect(syntaxDetail("a OR and b")).toBe(unexpected("and", 5));
  });

  test("a closing parenthesis where an operand is expected", () => {
    expect(syntaxDetail(")")).toBe(unexpected(")", 0));
    expect(syntaxDetail("a AND )")).toBe(unexpected(")", 6));
    expect(syntaxDetail("(a OR )")).toBe(unexpected(")", 6));
  });

  test("an operator right after an opening parenthesis", () => {
    expect(syntaxDetail("(AND a)")).toBe(unexpected("AND", 1));
  });
});

describe("syntax errors: invalid characters", () => {
  const invalid = (char: string, pos: number): string =>
    `Invalid character '${char}' found in query at position ${pos}. ${ALLOWED_CHARS}`;

  test.each([
    ["a!", "!", 1],
    ["a AND b@c", "@", 7],
    ["a,b", ",", 1],
    ["a & b", "&", 2],
    ["a || b", "|", 2],
    ["\"a\"", "\"", 0],
    ["a+b", "+", 1],
    ["a\u00a0b", "\u00a0", 1],
    ["docs.\u00e9crire", "\u00e9", 5],
  ] as const)("%j → %j at %d", (query, char, pos) => {
    expect(syntaxDetail(query)).toBe(invalid(char, pos));
  });

  test("a character outside the BMP is shown whole", () => {
    expect(syntaxDetail("a.\u{1F600}")).toBe(invalid("\u{1F600}", 2));
  });

  test("the first invalid character wins over any grammar error", () => {
    expect(syntaxDetail("AND ( a$ b# ")).toBe(invalid("$", 7));
  });
});

describe("syntax errors: extra content after a valid expression", () => {
  const extra = (text: string, pos: number): string => `Unexpected token '${text}' at position ${pos}. ${EXTRA}`;

  test("two permissions without an operator", () => {
    expect(syntaxDetail("a b")).toBe(extra("b", 2));
    expect(syntaxDetail("a AND b c")).toBe(extra("c", 8));
  });

  test("an unmatched closing parenthesis", () => {
    expect(syntaxDetail("a )")).toBe(extra(")", 2));
    expect(syntaxDetail("(a))")).toBe(extra(")", 3));
  });

  test("a group right after an operand", () => {
    expect(syntaxDetail("a (b)")).toBe(extra("(", 2));
    expect(syntaxDetail("(a) b")).toBe(extra("b", 4));
  });
});

describe("depth cap", () => {
  const nested = (depth: number): string => `${"(".repeat(depth)}a${")".repeat(depth)}`;

  test("exactly 100 levels of parentheses parse and evaluate", () => {
    expect(MAX_QUERY_DEPTH).toBe(100);
    const query = nested(100);
    expect(parsePermissionQuery(query)).toEqual(perm("a"));
    expect(allowed(query, ["a"])).toBe(true);
  });

  test("101 levels are a syntax error naming the first '(' beyond the cap", () => {
    expect(syntaxDetail(nested(101))).toBe(
      "Parentheses nested too deeply at position 100. A query may nest at most 100 levels of parentheses.",
    );
  });

  test("only open groups count: many sibling groups are fine", () => {
    const query = Array.from({ length: 150 }, (_, i) => `(p${i})`).join(" OR ");
    const tree = parsePermissionQuery(query);
    expect(tree.kind).toBe("or");
    expect(tree.kind === "or" ? tree.items.length : 0).toBe(150);
    expect(allowed(query, ["p149"])).toBe(true);
  });

  test("a deep mix of AND and OR beyond the cap is rejected too", () => {
    const query = `${"(a AND ".repeat(101)}b${")".repeat(101)}`;
    expect(syntaxDetail(query)).toBe(
      "Parentheses nested too deeply at position 700. A query may nest at most 100 levels of parentheses.",
    );
  });

  test("a 1000-character query of 500 unclosed '(' fails fast with the cap, not a stack overflow", () => {
    expect(syntaxDetail("(".repeat(1000))).toContain("Parentheses nested too deeply at position 100.");
  });
});
