/** The permission query language: the tree a query parses to, and what it allows a key holding given permissions. */
import { describe, expect, test } from "bun:test";
import { holdPermissions, holds, parsePermissionQuery } from "../../../src/services/verification/permission-query.ts";
import { allowed, and, or, perm } from "./permission-query.support.ts";

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
