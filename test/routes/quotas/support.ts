/**
 * What the workspace quota tests share: a server with small quotas, a fresh workspace per test (so
 * each starts from nothing), and the assertions of the 429 and of the usage the triggers keep.
 */
import { expect } from "bun:test";
import { ALL_GRANTS } from "../../../src/services/auth/index.ts";
import type { ApiResponse, Harness } from "../../support/harness.ts";
import { TEST_ACTOR } from "../../support/contract.ts";

/** Small limits, so that a test reaches each with a few calls. */
export const SMALL_QUOTAS = {
  TOLLGATE_WORKSPACE_MAX_KEYS: "3",
  TOLLGATE_WORKSPACE_MAX_IDENTITIES: "3",
  TOLLGATE_WORKSPACE_MAX_PERMISSIONS: "5",
  TOLLGATE_WORKSPACE_MAX_ROLES: "2",
  TOLLGATE_WORKSPACE_MAX_NAMESPACES: "3",
  TOLLGATE_WORKSPACE_STORAGE_MB: "1",
};

export const QUOTA_EXCEEDED = "user/too_many_requests/workspace_quota_exceeded";

export interface Workspace {
  id: string;
  key: string;
  apiId: string;
  post(path: string, body: unknown): Promise<ApiResponse>;
}

let made = 0;

/** A new workspace with a root key holding every grant and one API. */
export async function newWorkspace(h: Harness): Promise<Workspace> {
  const name = `quota-${process.pid}-${++made}-${Math.random().toString(36).slice(2, 8)}`;
  const ws = await h.running.services.workspaces.create({ name }, TEST_ACTOR);
  const key = await h.rootKeyWith([...ALL_GRANTS], name);
  const post = (path: string, body: unknown) => h.post(path, body, { key });
  const api = await post("/v2/apis.createApi", { name: "quota-api" });
  expect(api.status).toBe(200);
  return { id: ws.id, key, apiId: api.body.data.apiId, post };
}

/** Asserts the 429 of `quota`, naming its variable and limit. */
export function expectQuotaExceeded(res: ApiResponse, quota: string, variable: string, limit: string): void {
  expect(res.status).toBe(429);
  expect(res.body.error.type).toEndWith(QUOTA_EXCEEDED);
  expect(res.body.error.detail).toContain(`Workspace quota exceeded: ${quota}.`);
  expect(res.body.error.detail).toContain(variable);
  expect(res.body.error.detail).toContain(limit);
}

/** Live rows of `table` in the workspace (`live` adds the soft-delete condition). */
export function countIn(h: Harness, table: string, workspaceId: string, live = false): Promise<number> {
  return h.records.count(table, `workspace_id = ?${live ? " AND deleted_at IS NULL" : ""}`, workspaceId);
}

/** The workspace's usage row as the triggers keep it. */
export interface Usage { keys: number; identities: number; permissions: number; roles: number; namespaces: number; bytes: number }

export async function usageOf(h: Harness, workspaceId: string): Promise<Usage> {
  const [row] = await h.records.rows<Usage>(
    "SELECT keys, identities, permissions, roles, namespaces, bytes FROM workspace_usage WHERE workspace_id = ?", workspaceId);
  return row ?? { keys: 0, identities: 0, permissions: 0, roles: 0, namespaces: 0, bytes: 0 };
}

/** Asserts the usage row's counts equal the records' own counts (the triggers lost nothing). */
export async function expectUsageMatchesRecords(h: Harness, workspaceId: string): Promise<void> {
  const usage = await usageOf(h, workspaceId);
  expect({
    keys: usage.keys, identities: usage.identities, permissions: usage.permissions, roles: usage.roles, namespaces: usage.namespaces,
  }).toEqual({
    keys: await countIn(h, "keys", workspaceId, true),
    identities: await countIn(h, "identities", workspaceId, true),
    permissions: await countIn(h, "permissions", workspaceId),
    roles: await countIn(h, "roles", workspaceId),
    namespaces: await countIn(h, "ratelimit_namespaces", workspaceId, true),
  });
}
