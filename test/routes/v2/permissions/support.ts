/** Builders and queries shared by the permissions.* contract tests. */
import { expect } from "bun:test";
import type { Harness } from "../../../support/harness.ts";

export const PERMISSION_NOT_FOUND = "service/data/permission_not_found";
export const ROLE_NOT_FOUND = "service/data/role_not_found";
export const PERMISSION_DUPLICATE = "service/data/permission/duplicate";
export const ROLE_DUPLICATE = "service/data/role_already_exists";
export const REQUEST_ID = expect.stringMatching(/^req_/);

const opts = (key?: string) => (key === undefined ? {} : { key });

/** Creates a permission (name = slug unless given) and returns its id; fails on anything but 200. */
export async function createPermission(h: Harness, slug: string, extra: Record<string, unknown> = {}, key?: string): Promise<string> {
  const res = await h.post("/v2/permissions.createPermission", { name: slug, slug, ...extra }, opts(key));
  if (res.status !== 200) throw new Error(`createPermission answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.permissionId as string;
}

/** Creates a role and returns its id; fails on anything but 200. */
export async function createRole(h: Harness, name: string, permissions: string[] = [], key?: string): Promise<string> {
  const res = await h.post("/v2/permissions.createRole", { name, permissions }, opts(key));
  if (res.status !== 200) throw new Error(`createRole answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.roleId as string;
}

/** How many rows a table holds (whole database). */
export function countRows(h: Harness, table: "permissions" | "roles" | "role_permissions" | "key_permissions" | "key_roles" | "audit_logs"): Promise<number> {
  return h.records.count(table);
}

/**
 * Makes the next insert of a row named `name` into `table` race with a concurrent writer: a trigger
 * inserts a clashing row first, so only the unique index sees the duplicate. Returns the cleanup.
 */
export function simulateConcurrentInsert(h: Harness, table: "permissions" | "roles", name: string): () => void {
  const sqlite = h.embedded.storage.sqlite;
  const insert = table === "permissions"
    ? "INSERT INTO permissions (id, workspace_id, name, slug, created_at) VALUES ('perm_racer', NEW.workspace_id, NEW.name, 'racer-slug', 0)"
    : "INSERT INTO roles (id, workspace_id, name, created_at) VALUES ('role_racer', NEW.workspace_id, NEW.name, 0)";
  sqlite.run(`CREATE TEMP TRIGGER race_${table} BEFORE INSERT ON main.${table} WHEN NEW.name = '${name}' AND NEW.id NOT LIKE '%_racer' BEGIN ${insert}; END`);
  return () => sqlite.run(`DROP TRIGGER IF EXISTS race_${table}`);
}
