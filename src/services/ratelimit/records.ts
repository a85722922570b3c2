/**
 * Namespace and override rows in SQLite. Every function runs in the caller's transaction (or none).
 * Overrides are soft-deleted; only live ones (deleted_at null) are read here.
 */
import { and, asc, count, eq, gte, isNull, sql } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { ratelimitNamespaces, ratelimitOverrides } from "../../storage/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import type { OverrideRecord } from "./overrides.ts";

export interface NamespaceRecord {
  id: string;
  name: string;
  deleted: boolean;
}

const namespaceColumns = { id: ratelimitNamespaces.id, name: ratelimitNamespaces.name, deletedAt: ratelimitNamespaces.deletedAt };
const overrideColumns = {
  id: ratelimitOverrides.id, identifier: ratelimitOverrides.identifier, limit: ratelimitOverrides.limit,
  duration: ratelimitOverrides.durationMs, createdAt: ratelimitOverrides.createdAt,
};

function toNamespace(row: { id: string; name: string; deletedAt: number | null }): NamespaceRecord {
  return { id: row.id, name: row.name, deleted: row.deletedAt !== null };
}

/** The workspace's namespace whose id, or else whose name, is `ref` (deleted ones included). */
export function findNamespace(db: Db, workspaceId: string, ref: string): NamespaceRecord | undefined {
  const byId = db.select(namespaceColumns).from(ratelimitNamespaces)
    .where(and(eq(ratelimitNamespaces.workspaceId, workspaceId), eq(ratelimitNamespaces.id, ref))).get();
  const row = byId ?? db.select(namespaceColumns).from(ratelimitNamespaces)
    .where(and(eq(ratelimitNamespaces.workspaceId, workspaceId), eq(ratelimitNamespaces.name, ref))).get();
  return row ? toNamespace(row) : undefined;
}

/** Creates a namespace named `name`; returns the existing one if the name is taken. */
export function insertNamespace(db: Db, workspaceId: string, name: string, nowMs: number): { namespace: NamespaceRecord; created: boolean } {
  const id = newId("rlns");
  const inserted = db.insert(ratelimitNamespaces).values({ id, workspaceId, name, createdAt: nowMs })
    .onConflictDoNothing().returning({ id: ratelimitNamespaces.id }).all();
  if (inserted.length > 0) return { namespace: { id, name, deleted: false }, created: true };
  const existing = db.select(namespaceColumns).from(ratelimitNamespaces)
    .where(and(eq(ratelimitNamespaces.workspaceId, workspaceId), eq(ratelimitNamespaces.name, name))).get();
  if (!existing) throw new Error(`namespace '${name}' neither inserted nor found`);
  return { namespace: toNamespace(existing), created: false };
}

const liveIn = (namespaceId: string) => and(eq(ratelimitOverrides.namespaceId, namespaceId), isNull(ratelimitOverrides.deletedAt));

/** Every live override of a namespace. */
export function loadOverrides(db: Db, namespaceId: string): OverrideRecord[] {
  return db.select(overrideColumns).from(ratelimitOverrides).where(liveIn(namespaceId)).all();
}

/** How many live overrides a namespace has, counted no further than `atMost` (no more rows are read). */
export function countLiveOverrides(db: Db, namespaceId: string, atMost: number): number {
  return countLiveOverridesQuery(db, namespaceId, atMost).get()?.n ?? 0;
}

/** The query of countLiveOverrides: a bounded walk of ratelimit_overrides_live_uq. */
export function countLiveOverridesQuery(db: Db, namespaceId: string, atMost: number) {
  const some = db.select({ identifier: ratelimitOverrides.identifier }).from(ratelimitOverrides).where(liveIn(namespaceId)).limit(atMost).as("some");
  return db.select({ n: count() }).from(some);
}

/** The live overrides of a namespace whose identifier holds a `*`. */
export function loadWildcardOverrides(db: Db, namespaceId: string): OverrideRecord[] {
  return wildcardOverridesQuery(db, namespaceId).all();
}

/** The query of loadWildcardOverrides; its condition is the partial index ratelimit_overrides_live_wildcard_idx's, so only wildcards are read. */
export function wildcardOverridesQuery(db: Db, namespaceId: string) {
  return db.select(overrideColumns).from(ratelimitOverrides).where(and(liveIn(namespaceId), sql`instr(${ratelimitOverrides.identifier}, '*') > 0`));
}

/** The live override stored with exactly this identifier (a pattern is compared as written). */
export function findLiveOverride(db: Db, namespaceId: string, identifier: string): OverrideRecord | undefined {
  return db.select(overrideColumns).from(ratelimitOverrides)
    .where(and(eq(ratelimitOverrides.namespaceId, namespaceId), eq(ratelimitOverrides.identifier, identifier), isNull(ratelimitOverrides.deletedAt))).get();
}

/**
 * findLiveOverride compiled once, for the checks of a namespace whose exact overrides stay in
 * SQLite: each check then runs the statement without building its query again.
 */
export function prepareFindLiveOverride(db: Db): (namespaceId: string, identifier: string) => OverrideRecord | undefined {
  const statement = db.select(overrideColumns).from(ratelimitOverrides).where(and(
    eq(ratelimitOverrides.namespaceId, sql.placeholder("namespaceId")), eq(ratelimitOverrides.identifier, sql.placeholder("identifier")),
    isNull(ratelimitOverrides.deletedAt),
  )).prepare();
  return (namespaceId, identifier) => statement.get({ namespaceId, identifier });
}

/** Updates `existing` (it keeps its id), or inserts a new live override when there is none. */
export function upsertOverride(
  db: Db, workspaceId: string, namespaceId: string, existing: OverrideRecord | undefined,
  input: { identifier: string; limit: number; duration: number }, nowMs: number,
): OverrideRecord {
  const values = { identifier: input.identifier, limit: input.limit, duration: input.duration };
  if (existing) {
    db.update(ratelimitOverrides).set({ limit: input.limit, durationMs: input.duration, updatedAt: nowMs })
      .where(eq(ratelimitOverrides.id, existing.id)).run();
    return { ...values, id: existing.id, createdAt: existing.createdAt };
  }
  const id = newId("rlor");
  db.insert(ratelimitOverrides).values({
    id, workspaceId, namespaceId, identifier: input.identifier, limit: input.limit, durationMs: input.duration, createdAt: nowMs,
  }).run();
  return { ...values, id, createdAt: nowMs };
}

export function softDeleteOverride(db: Db, overrideId: string, nowMs: number): void {
  db.update(ratelimitOverrides).set({ deletedAt: nowMs, updatedAt: nowMs }).where(eq(ratelimitOverrides.id, overrideId)).run();
}

/** Up to `limit` live overrides by id ascending, starting at `cursor` (inclusive) when given. */
export function listLiveOverrides(db: Db, namespaceId: string, opts: { limit: number; cursor?: string }): OverrideRecord[] {
  const where = [eq(ratelimitOverrides.namespaceId, namespaceId), isNull(ratelimitOverrides.deletedAt)];
  if (opts.cursor !== undefined) where.push(gte(ratelimitOverrides.id, opts.cursor));
  return db.select(overrideColumns).from(ratelimitOverrides).where(and(...where)).orderBy(asc(ratelimitOverrides.id)).limit(opts.limit).all();
}
