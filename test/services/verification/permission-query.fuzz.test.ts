/**
 * Fuzzing the permission query parser with seeded random input: it either parses or throws the
 * syntax AppError (never anything else, never a hang), and on generated well-formed queries it
 * agrees with a reference evaluator.
 */
import { describe, expect, test } from "bun:test";
import { AppError } from "../../../src/errors/app-error.ts";
import { evaluatePermissionQuery, holdPermissions, parsePermissionQuery } from "../../../src/services/verification/permission-query.ts";
import { rng } from "../../support/prng.ts";

const PIECES = ["a", "b.c", "x.*", "*", " AND ", " OR ", " and ", " or ", "(", ")", " ", "\t", "AND", "OR", "é", "$", "'", "\"", "\\", ";", "--", "docs.read", "_", "-", ":", "/", "0", "\n", "((", "))", "AN", "ORR"];

describe("random input", () => {
  test("20,000 random queries either parse or fail with the syntax error", () => {
    const next = rng(20261122);
    const held = holdPermissions(["a", "b.c", "x.*", "docs.read"]);
    let parsed = 0;
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + Math.floor(next() * 12);
      let query = "";
      for (let j = 0; j < length; j++) query += PIECES[Math.floor(next() * PIECES.length)];
      try {
        const ast = parsePermissionQuery(query);
        expect(typeof evaluatePermissionQuery(ast, held)).toBe("boolean");
        parsed++;
      } catch (e) {
        if (!(e instanceof AppError) || e.code !== "permissions_query_syntax_error") throw new Error(`query ${JSON.stringify(query)} threw ${String(e)}`);
        const position = /position (\d+)/.exec(e.detail)?.[1];
        if (position !== undefined) expect(Number(position)).toBeLessThanOrEqual(query.length);
      }
    }
    expect(parsed).toBeGreaterThan(500);
  });

  test("deep nesting and long inputs end with a syntax error or an answer, not a stack overflow", () => {
    for (const query of ["(".repeat(5000), `${"(".repeat(99)}a${")".repeat(99)}`, Array(400).fill("a").join(" AND "), "a OR ".repeat(300)]) {
      try {
        parsePermissionQuery(query);
      } catch (e) {
        expect(e).toBeInstanceOf(AppError);
      }
    }
  });
});

type Expr = { op: "perm"; name: string } | { op: "and" | "or"; left: Expr; right: Expr };

function generate(next: () => number, depth: number): Expr {
  if (depth === 0 || next() < 0.3) return { op: "perm", name: ["a", "b", "c.d", "c.e", "f"][Math.floor(next() * 5)]! };
  return { op: next() < 0.5 ? "and" : "or", left: generate(next, depth - 1), right: generate(next, depth - 1) };
}

/** Fully parenthesised, so precedence cannot change the meaning. */
function render(e: Expr): string {
  return e.op === "perm" ? e.name : `(${render(e.left)} ${e.op.toUpperCase()} ${render(e.right)})`;
}

function reference(e: Expr, held: Set<string>): boolean {
  if (e.op === "perm") return held.has(e.name) || (e.name.startsWith("c.") && held.has("c.*"));
  return e.op === "and" ? reference(e.left, held) && reference(e.right, held) : reference(e.left, held) || reference(e.right, held);
}

describe("generated well-formed queries", () => {
  test("5,000 queries evaluate as the reference evaluator does", () => {
    const next = rng(7);
    for (let i = 0; i < 5_000; i++) {
      const expr = generate(next, 5);
      const heldList = ["a", "b", "c.d", "c.e", "f", "c.*"].filter(() => next() < 0.5);
      const expected = reference(expr, new Set(heldList));
      expect(evaluatePermissionQuery(parsePermissionQuery(render(expr)), holdPermissions(heldList))).toBe(expected);
    }
  });
});
