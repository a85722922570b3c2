import { describe, expect, test } from "bun:test";
import { AppError } from "../../../src/errors/app-error.ts";
import {
  evaluatePermissionQuery,
  holdPermissions,
  holds,
  MAX_QUERY_DEPTH,
  parsePermissionQuery,
  type PermissionQuery,
} from "../../../src/services/verification/permission-query.ts";

function allowed(query: string, held: string[]): boolean {
  return evaluatePermissionQuery(parsePermissionQuery(query), holdPermissions(held));
}

/** The detail of the syntax error `query` raises; fails the test when it parses or throws anything else. */
function syntaxDetail(query: string): string {
  try {
    parsePermissionQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("permissions_query_syntax_error");
    return (error as AppError).detail;
  }
  throw new Error(`expected a syntax error for ${JSON.stringify(query)}`);
}

const perm = (name: string): PermissionQuery => ({ kind: "perm", name });
const and = (...items: PermissionQuery[]): PermissionQuery => ({ kind: "and", items });
const or = (...items: PermissionQuery[]): PermissionQuery => ({ kind: "or", items });

const EXPECTED_OPERAND = "Expected a permission identifier or opening parenthesis.";
const EXTRA = "The query appears to have extra content after a valid expression.";
const ALLOWED_CHARS = "Permission identifiers may contain letters, digits, '.', '_', '-', ':', '*' and '/'.";

describe("parse: the tree", () => {
  test("a single permission is a leaf", () => {
    expect(parsePermissionQuery("documents.read")).toEqual(perm("documents.read"));
  });

  test("every allowed character stays in the permission name", () => {
    expect(parsePermissionQuery("aZ09._-:*/x")).toEqual(perm("aZ09._-:*/x"));
  });

  test("surrounding and repeated whitespace (space, tab, newline, CR) is ignored", () => {
    expect(parsePermissionQuery(" \t a \n AND\r\nb  ")).toEqual(and(perm("a"), perm("b")));
  });

  test("a chain of one operator is one flat node", () => {
    expect(parsePermissionQuery("a AND b AND c")).toEqual(and(perm("a"), perm("b"), perm("c")));
    expect(parsePermissionQuery("a OR b OR c")).toEqual(or(perm("a"), perm("b"), perm("c")));
  });

  test("AND binds tighter than OR", () => {
    expect(parsePermissionQuery("a OR b AND c")).toEqual(or(perm("a"), and(perm("b"), perm("c"))));
    expect(parsePermissionQuery("a AND b OR c")).toEqual(or(and(perm("a"), perm("b")), perm("c")));
  });

  test("parentheses override precedence; redundant ones leave no trace", () => {
    expect(parsePermissionQuery("(a OR b) AND c")).toEqual(and(or(perm("a"), perm("b")), perm("c")));
    expect(parsePermissionQuery("((a))")).toEqual(perm("a"));
  });

  test("operators are case-insensitive and keep no case of their own", () => {
    expect(parsePermissionQuery("a and b Or c oR d AnD e")).toEqual(
      or(and(perm("a"), perm("b")), perm("c"), and(perm("d"), perm("e"))),
    );
  });

  test("operators are whole words: ANDROID, oracle, or.read and and_x are permissions", () => {
    expect(parsePermissionQuery("ANDROID OR oracle AND or.read OR and_x")).toEqual(
      or(perm("ANDROID"), and(perm("oracle"), perm("or.read")), perm("and_x")),
    );
  });

  test("parentheses need no surrounding spaces", () => {
    expect(parsePermissionQuery("a AND(b OR c)")).toEqual(and(perm("a"), or(perm("b"), perm("c"))));
  });

  test("permission names keep their case", () => {
    expect(parsePermissionQuery("Documents.Read")).toEqual(perm("Documents.Read"));
  });
});

describe("evaluate: a single permission", () => {
  test("held, alone or among others → true", () => {
    expect(allowed("documents.read", ["documents.read"])).toBe(true);
    expect(allowed("documents.read", ["x", "documents.read", "y"])).toBe(true);
  });

  test("not held, or nothing held → false", () => {
    expect(allowed("documents.read", ["documents.write"])).toBe(false);
    expect(allowed("documents.read", [])).toBe(false);
  });

  test("matching is case-sensitive", () => {
    expect(allowed("Documents.read", ["documents.read"])).toBe(false);
    expect(allowed("documents.read", ["Documents.read"])).toBe(false);
  });

  test("a prefix or extension of a held permission is not held", () => {
    expect(allowed("documents", ["documents.read"])).toBe(false);
    expect(allowed("documents.read.all", ["documents.read"])).toBe(false);
  });
});

describe("evaluate: AND", () => {
  test("all held → true", () => {
    expect(allowed("a AND b AND c", ["a", "b", "c"])).toBe(true);
  });

  test("one or all missing → false", () => {
    expect(allowed("a AND b AND c", ["a", "c"])).toBe(false);
    expect(allowed("a AND b", ["b"])).toBe(false);
    expect(allowed("a AND b", [])).toBe(false);
  });
});

describe("evaluate: OR", () => {
  test("any one or all held → true", () => {
    expect(allowed("a OR b OR c", ["c"])).toBe(true);
    expect(allowed("a OR b OR c", ["a"])).toBe(true);
    expect(allowed("a OR b", ["a", "b"])).toBe(true);
  });

  test("none held → false", () => {
    expect(allowed("a OR b OR c", ["d"])).toBe(false);
  });
});

describe("evaluate: precedence", () => {
  test("a OR b AND c means a OR (b AND c)", () => {
    expect(allowed("a OR b AND c", ["a"])).toBe(true); // would be false as (a OR b) AND c
    expect(allowed("a OR b AND c", ["b"])).toBe(false);
    expect(allowed("a OR b AND c", ["b", "c"])).toBe(true);
    expect(allowed("a OR b AND c", ["c"])).toBe(false);
  });

  test("a AND b OR c means (a AND b) OR c", () => {
    expect(allowed("a AND b OR c", ["c"])).toBe(true); // would be false as a AND (b OR c)
    expect(allowed("a AND b OR c", ["a"])).toBe(false);
  });

  test("lowercase operators keep the precedence", () => {
    expect(allowed("a or b and c", ["a"])).toBe(true);
    expect(allowed("a or b and c", ["b"])).toBe(false);
  });
});

describe("evaluate: parentheses and nesting", () => {
  test("(a OR b) AND c needs c", () => {
    expect(allowed("(a OR b) AND c", ["a"])).toBe(false);
    expect(allowed("(a OR b) AND c", ["a", "c"])).toBe(true);
    expect(allowed("(a OR b) AND c", ["b", "c"])).toBe(true);
  });

  test("deep nesting evaluates inside out", () => {
    const query = "a AND (b OR (c AND (d OR e)))";
    expect(allowed(query, ["a", "b"])).toBe(true);
    expect(allowed(query, ["a", "c", "e"])).toBe(true);
    expect(allowed(query, ["a", "c"])).toBe(false);
    expect(allowed(query, ["b", "c", "d"])).toBe(false);
  });

  test("two groups joined by OR", () => {
    const query = "(a AND b) OR (c AND d)";
    expect(allowed(query, ["c", "d"])).toBe(true);
    expect(allowed(query, ["a", "c"])).toBe(false);
  });
});

describe("evaluate: wildcards held by the key", () => {
  test("a.b.* covers a.b.c and a.b.c.d", () => {
    expect(allowed("a.b.c", ["a.b.*"])).toBe(true);
    expect(allowed("a.b.c.d", ["a.b.*"])).toBe(true);
  });

  test("a.b.* covers neither a.bc nor a.b nor a.c", () => {
    expect(allowed("a.bc", ["a.b.*"])).toBe(false);
    expect(allowed("a.b", ["a.b.*"])).toBe(false);
    expect(allowed("a.c", ["a.b.*"])).toBe(false);
    expect(allowed("A.b.c", ["a.b.*"])).toBe(false); // case-sensitive like everything else
  });

  test("* covers everything", () => {
    expect(allowed("anything", ["*"])).toBe(true);
    expect(allowed("a.b.c AND Other:thing/x", ["*"])).toBe(true);
  });

  test("a held wildcard covers itself literally", () => {
    expect(allowed("a.*", ["a.*"])).toBe(true);
    expect(allowed("*", ["*"])).toBe(true);
  });

  test("a required wildcard is covered by a broader held one", () => {
    expect(allowed("a.b.*", ["a.*"])).toBe(true);
    expect(allowed("a.*", ["*"])).toBe(true);
  });

  test("no expansion the other way: a required wildcard is not covered by what it would match", () => {
    expect(allowed("a.*", ["a.b", "a.c"])).toBe(false);
    expect(allowed("*", ["a", "b"])).toBe(false);
    expect(allowed("a.*", ["a.b.*"])).toBe(false);
    expect(allowed("*", ["a.*"])).toBe(false);
  });

  test("a * that is not a trailing .* segment is literal", () => {
    expect(allowed("ab", ["a*"])).toBe(false);
    expect(allowed("a.bc", ["a.b*"])).toBe(false);
    expect(allowed("a.x.c", ["a.*.c"])).toBe(false);
    expect(allowed("a.*.c", ["a.*.c"])).toBe(true);
  });

  test("wildcards combine with AND and OR", () => {
    expect(allowed("docs.read AND billing.write", ["docs.*"])).toBe(false);
    expect(allowed("docs.read AND billing.write", ["docs.*", "billing.*"])).toBe(true);
    expect(allowed("billing.write OR docs.read", ["docs.*"])).toBe(true);
  });
});

describe("holds", () => {
  test("answers exact, prefix and total coverage", () => {
    const held = holdPermissions(["x.y", "a.b.*"]);
    expect(holds(held, "x.y")).toBe(true);
    expect(holds(held, "x.y.z")).toBe(false);
    expect(holds(held, "a.b.anything")).toBe(true);
    expect(holds(held, "a.b")).toBe(false);
    expect(holds(holdPermissions(["*"]), "q")).toBe(true);
  });

  test("accepts any iterable, such as a Set", () => {
    expect(holds(holdPermissions(new Set(["a.*"])), "a.z")).toBe(true);
  });

  test("indexes wildcards as prefixes once", () => {
    const held = holdPermissions(["a.b.*", "*", "c"]);
    expect([...held.prefixes]).toEqual(["a.b."]);
    expect(held.all).toBe(true);
    expect([...held.exact]).toEqual(["a.b.*", "*", "c"]);
  });
});

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
    `Missing closing parenthesis ')' at position ${pos}. Every opening parenthesis needs a matching closing one.`;

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
    `Empty parentheses found at position ${pos}. Parentheses must contain a permission or expression.`;

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
