/**
 * Helpers for the HTTP contract tests: error assertions and record builders. Stateless; every
 * record is made through the real API.
 */
import { expect } from "bun:test";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import type { ApiResponse, Harness } from "./harness.ts";
import { answered } from "../../src/storage/work.ts";

export const TEST_ACTOR = { type: "cli" as const, id: "test" };
export const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** Asserts an error envelope: status, `type` URL (`<system>/<category>/<specific>`), optional exact detail. */
export function expectError(h: Harness, res: ApiResponse, status: number, typePath: string, detail?: string): void {
  expect({ status: res.status, errorStatus: res.body?.error?.status, type: res.body?.error?.type })
    .toEqual({ status, errorStatus: status, type: `${h.url}/docs/api-reference/errors-v2/${typePath}` });
  expect(res.body.data).toBeUndefined();
  expect(res.body.meta.requestId).toMatch(/^req_/);
  if (detail !== undefined) expect(res.body.error.detail).toBe(detail);
}

/**
 * Asserts the 403 for a choice of grants, in upstream's words: `Missing one of these permissions:
 * ['<grant>', ...], have: ['<held>', ...]`; with `held`, the grants the root key holds, in any order.
 */
export function expectMissingOneOf(h: Harness, res: ApiResponse, grants: readonly string[], held?: readonly string[]): void {
  expectError(h, res, 403, INSUFFICIENT);
  const parts = /^Missing one of these permissions: \[(.*)\], have: \[(.*)\]$/.exec(res.body.error.detail as string);
  expect(parts?.[1]).toBe(grants.map((g) => `'${g}'`).join(", "));
  if (held !== undefined) {
    const listed = parts?.[2] ? parts[2].slice(1, -1).split("', '") : [];
    expect(listed.sort()).toEqual([...held].sort());
  }
}

/** Asserts a 400 `invalid_input` whose `errors[]` names `location` (e.g. `body.credits.remaining`). */
export function expectInvalid(h: Harness, res: ApiResponse, location: string): void {
  expectError(h, res, 400, "service/application/invalid_input");
  expect(res.body.error.errors.map((e: { location: string }) => e.location)).toContain(location);
}

export const INVALID_INPUT = "service/application/invalid_input";
export const API_NOT_FOUND = "service/data/api_not_found";
export const KEY_NOT_FOUND = "service/data/key_not_found";
export const INSUFFICIENT = "service/authorization/insufficient_permissions";
export const ROOT_KEY_NOT_FOUND = "service/authentication/key_not_found";

/** Creates an API with the bootstrap key (or `key`) and returns its id. */
export async function createApi(h: Harness, name = "test-api", key?: string): Promise<string> {
  const res = await h.post("/v2/apis.createApi", { name }, key === undefined ? {} : { key });
  expect(res.status).toBe(200);
  return res.body.data.apiId as string;
}

/** Creates a key and returns `{keyId, key}`; fails the test on anything but 200. */
export async function createKey(h: Harness, body: Record<string, unknown>, key?: string): Promise<{ keyId: string; key: string }> {
  const res = await h.post("/v2/keys.createKey", body, key === undefined ? {} : { key });
  if (res.status !== 200) throw new Error(`createKey answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A new workspace and a root key there holding every grant. */
export async function otherWorkspaceRootKey(h: Harness, name: string): Promise<string> {
  await h.running.services.workspaces.create({ name }, TEST_ACTOR);
  return await h.rootKeyWith([...ALL_GRANTS], name);
}

/** Every grant except those listed. */
export function allGrantsExcept(...missing: string[]): string[] {
  return ALL_GRANTS.filter((g) => !missing.includes(g));
}

/** Creates a role holding `permissionSlugs` (created when missing) with the bootstrap key (or `key`); returns its id. */
export async function createRole(h: Harness, name: string, permissionSlugs: string[] = [], key?: string): Promise<string> {
  const res = await h.post("/v2/permissions.createRole", { name, permissions: permissionSlugs }, key === undefined ? {} : { key });
  if (res.status !== 200) throw new Error(`createRole answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.roleId as string;
}
