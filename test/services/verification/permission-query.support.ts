/** Helpers of the permission-query tests: parse and evaluate in one step, the syntax error's detail, tree builders. */
import { expect } from "bun:test";
import { AppError } from "../../../src/errors/app-error.ts";
import {
  evaluatePermissionQuery,
  holdPermissions,
  parsePermissionQuery,
  type PermissionQuery,
} from "../../../src/services/verification/permission-query.ts";

/** Whether a key holding `held` satisfies `query`. */
export function allowed(query: string, held: string[]): boolean {
  return evaluatePermissionQuery(parsePermissionQuery(query), holdPermissions(held));
}

/** The detail of the syntax error `query` raises; fails the test when it parses or throws anything else. */
export function syntaxDetail(query: string): string {
  try {
    parsePermissionQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("permissions_query_syntax_error");
    return (error as AppError).detail;
  }
  throw new Error(`expected a syntax error for ${JSON.stringify(query)}`);
}

export const perm = (name: string): PermissionQuery => ({ kind: "perm", name });
export const and = (...items: PermissionQuery[]): PermissionQuery => ({ kind: "and", items });
export const or = (...items: PermissionQuery[]): PermissionQuery => ({ kind: "or", items });
