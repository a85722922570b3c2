/**
 * The console hides what the server would refuse: its check and the server's (both on
 * src/lib/grants.ts) agree on one table of grants and actions, wildcards and `apis.` included.
 */
import { describe, expect, test } from "bun:test";
import { allows, allowsSome, grantsOf } from "../../src/console/app/permissions.ts";
import { can, type Principal } from "../../src/services/auth/index.ts";
import { normaliseGrants } from "../../src/lib/grants.ts";

type Case = [grants: string[], resource: "api" | "rbac" | "audit", id: string, action: string, allowed: boolean];

const CASES: Case[] = [
  [["api.*.create_key"], "api", "*", "create_key", true],
  [["api.*.create_key"], "api", "api_1", "create_key", true],
  [["api.api_1.create_key"], "api", "api_1", "create_key", true],
  [["api.api_1.create_key"], "api", "api_2", "create_key", false],
  [["api.api_1.create_key"], "api", "*", "create_key", false],
  [["apis.api_1.update_key"], "api", "api_1", "update_key", true],
  [["apis.*.read_key"], "api", "api_9", "read_key", true],
  [["*"], "api", "*", "read_api", false],
  [["api.*.*"], "api", "api_1", "read_api", false],
  [["api.*.read_key"], "api", "api_1", "update_key", false],
  [["rbac.*.add_role_to_key"], "rbac", "*", "add_role_to_key", true],
  [["audit.*.read_log"], "audit", "*", "read_log", true],
  [["API.*.read_api"], "api", "*", "read_api", false],
  [[], "api", "*", "read_api", false],
];

describe("the console's check agrees with the server's", () => {
  for (const [grants, resource, id, action, allowed] of CASES) {
    test(`${JSON.stringify(grants)} → ${resource}.${id}.${action}: ${allowed ? "allowed" : "refused"}`, () => {
      const principal: Principal = { workspaceId: "ws_1", rootKeyId: "rk_1", actor: { type: "root_key", id: "rk_1" }, permissions: normaliseGrants(grants) };
      expect(can(principal, resource, id, action)).toBe(allowed);
      expect(allows(grantsOf(grants), { resource, id, action })).toBe(allowed);
    });
  }
});

describe("allowsSome: the action on at least one id", () => {
  test("a grant on one API, or on all, counts; another action or resource does not", () => {
    expect(allowsSome(grantsOf(["api.api_1.read_api"]), "api", "read_api")).toBe(true);
    expect(allowsSome(grantsOf(["apis.*.read_api"]), "api", "read_api")).toBe(true);
    expect(allowsSome(grantsOf(["api.api_1.read_key"]), "api", "read_api")).toBe(false);
    expect(allowsSome(grantsOf(["rbac.*.read_api"]), "api", "read_api")).toBe(false);
  });
});
