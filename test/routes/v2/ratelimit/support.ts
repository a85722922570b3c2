/**
 * Helpers for the rate-limit contract tests of both path families: `/v2/ratelimit.<op>` (upstream)
 * and `/v2/ratelimits.<op>` (spec). Operations whose shapes agree share one suite per family.
 */
import { expect, test } from "bun:test";
import { expectInvalid } from "../../../support/contract.ts";
import { newId } from "../../../../src/lib/ids.ts";
import type { ApiResponse, Harness } from "../../../support/harness.ts";

export type Family = "ratelimit" | "ratelimits";

export const NS_NOT_FOUND = "service/data/ratelimit_namespace_not_found";
export const OVERRIDE_NOT_FOUND = "service/data/ratelimit_override_not_found";
export const NS_GONE = "service/data/ratelimit_namespace_gone";
export const NS_NOT_FOUND_DETAIL = "This namespace does not exist.";
export const OVERRIDE_NOT_FOUND_DETAIL = "This override does not exist.";
export const NS_GONE_DETAIL = "This namespace has been deleted. Contact support to restore.";

export const MINUTE = 60_000;

let seq = 0;
/** A name no other test of the process uses. */
export function uniq(prefix: string): string {
  seq++;
  return `${prefix}-${seq}-${Math.random().toString(36).slice(2, 8)}`;
}

export function path(family: Family, op: string): string {
  return `/v2/${family}.${op}`;
}

export async function workspaceId(h: Harness, workspace = "default"): Promise<string> {
  return (await h.running.services.workspaces.get(workspace)).id;
}

/** The id of the namespace named `name` in the workspace, or undefined when none exists. */
export async function namespaceId(h: Harness, name: string, workspace = "default"): Promise<string | undefined> {
  const [row] = await h.records.rows<{ id: string }>(
    "SELECT id FROM ratelimit_namespaces WHERE workspace_id = ? AND name = ?", await workspaceId(h, workspace), name,
  );
  return row?.id;
}

/**
 * Inserts a soft-deleted namespace. No route deletes namespaces, so this writes the row a delete
 * would leave; it must happen before the service first looks the name up (the service caches).
 */
export async function insertDeletedNamespace(h: Harness, name: string): Promise<string> {
  const id = newId("rlns");
  const now = h.clock.now();
  await h.records.run(
    "INSERT INTO ratelimit_namespaces (id, workspace_id, name, created_at, deleted_at) VALUES (?, ?, ?, ?, ?)",
    id, await workspaceId(h), name, now, now,
  );
  return id;
}

/** Uses `limit` once so the namespace exists (created on first use); returns its id. */
export async function createNamespace(h: Harness, name = uniq("ns")): Promise<string> {
  const res = await h.post("/v2/ratelimit.limit", { namespace: name, identifier: "bootstrap", limit: 1, duration: 1000, cost: 0 });
  expect(res.status).toBe(200);
  return (await namespaceId(h, name))!;
}

export async function setOverride(h: Harness, namespace: string, identifier: string, limit: number, duration = MINUTE): Promise<string> {
  const res = await h.post("/v2/ratelimit.setOverride", { namespace, identifier, limit, duration });
  if (res.status !== 200) throw new Error(`setOverride answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.overrideId as string;
}

/** Events of the audit log with this event name that name `resourceId`. */
export function auditEvents(h: Harness, event: string, resourceId: string): Promise<number> {
  return h.records.count("audit_logs", "event = ? AND resources LIKE ?", event, `%${resourceId}%`);
}

/** Asserts the success envelope with `data` exactly `data`. */
export function expectData(res: ApiResponse, data: unknown): void {
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ meta: { requestId: expect.stringMatching(/^req_/) }, data });
}

/** The end of the fixed window of `durationMs` that holds `nowMs`. */
export function windowEnd(nowMs: number, durationMs: number): number {
  return Math.floor(nowMs / durationMs) * durationMs + durationMs;
}

/** A change to a valid body, the name of the test, and the location the 400 must name. */
export type InvalidCase = [name: string, change: Record<string, unknown>, location: string];

/**
 * Registers a 400 test for each case, and one that leaves out each of the fields every rate-limit
 * body needs (`namespace`, `identifier`, `limit`, `duration`) in turn.
 */
export function invalidBodyTests(h: Harness, url: string, valid: (change?: Record<string, unknown>) => Record<string, unknown>, cases: InvalidCase[]): void {
  for (const [name, change, location] of cases) {
    test(name, async () => {
      expectInvalid(h, await h.post(url, valid(change)), location);
    });
  }

  test("each required field", async () => {
    for (const field of ["namespace", "identifier", "limit", "duration"]) {
      const b = valid();
      delete b[field];
      expectInvalid(h, await h.post(url, b), `body.${field}`);
    }
  });
}

/**
 * A list page's items and cursor in either family's shape, asserting that shape: `ratelimit`
 * answers `data: [...]` + `pagination {cursor?, hasMore}`, `ratelimits` `data: {<field>, cursor?}`.
 */
export function readFamilyPage<T>(family: Family, res: ApiResponse, field: string): { items: T[]; cursor: string | undefined } {
  expect(res.status).toBe(200);
  expect(res.body.meta.requestId).toMatch(/^req_/);
  if (family === "ratelimit") {
    expect(Array.isArray(res.body.data)).toBe(true);
    const { cursor, hasMore } = res.body.pagination;
    expect(hasMore).toBe(cursor !== undefined);
    expect(Object.keys(res.body.pagination).sort()).toEqual(cursor === undefined ? ["hasMore"] : ["cursor", "hasMore"]);
    return { items: res.body.data, cursor };
  }
  expect(res.body.pagination).toBeUndefined();
  expect(Object.keys(res.body.data).sort()).toEqual(res.body.data.cursor === undefined ? [field] : ["cursor", field]);
  return { items: res.body.data[field], cursor: res.body.data.cursor };
}
