/**
 * Helpers for the tests of the keys.* management routes: verification (to prove that each change
 * reaches the very next verification), audit rows (read by the identities and permissions route
 * tests too), roles and permissions made through the API.
 */
import { expect } from "bun:test";
import type { Harness } from "./harness.ts";

/** keys.verifyKey with the bootstrap root key; asserts 200 and returns `data`. */
export async function verify(h: Harness, key: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await h.post("/v2/keys.verifyKey", { key, ...extra });
  expect(res.status).toBe(200);
  return res.body.data;
}

export interface AuditRow {
  event: string;
  actorId: string;
  description: string;
  resources: Array<{ type: string; id: string; name?: string }>;
}

/**
 * Audit entries of `event` that name resource `resourceId`, oldest first. Entries of the same ms keep
 * the order the table scan gives (insertion order on both backends: audit rows are never updated);
 * PostgreSQL has no rowid to sort them by, hence the stable sort here rather than in SQL.
 */
export async function auditRows(h: Harness, event: string, resourceId: string): Promise<AuditRow[]> {
  const rows = await h.records.rows<{ time: number; event: string; actor_id: string; description: string; resources: string }>(
    "SELECT time, event, actor_id, description, resources FROM audit_logs WHERE event = ?", event,
  );
  return rows
    .sort((a, b) => a.time - b.time)
    .map((r) => ({ event: r.event, actorId: r.actor_id, description: r.description, resources: JSON.parse(r.resources) as AuditRow["resources"] }))
    .filter((r) => r.resources.some((res) => res.id === resourceId));
}

/** Creates a role through permissions.createRole and returns its id. */
export async function createRole(h: Harness, name: string, permissions: string[] = [], description?: string): Promise<string> {
  const res = await h.post("/v2/permissions.createRole", { name, ...(permissions.length > 0 ? { permissions } : {}), ...(description ? { description } : {}) });
  if (res.status !== 200) throw new Error(`createRole answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.roleId as string;
}

/** Creates a permission through permissions.createPermission and returns its id. */
export async function createPermission(h: Harness, slug: string, description?: string): Promise<string> {
  const res = await h.post("/v2/permissions.createPermission", { name: slug, slug, ...(description ? { description } : {}) });
  if (res.status !== 200) throw new Error(`createPermission answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.permissionId as string;
}

/** keys.getKey's `data` for a key (200 asserted). */
export async function getKey(h: Harness, keyId: string): Promise<any> {
  const res = await h.post("/v2/keys.getKey", { keyId });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Number of rows of `table` where `column` = `value`. */
export function countRows(h: Harness, table: string, column: string, value: string): Promise<number> {
  return h.records.count(table, `${column} = ?`, value);
}
