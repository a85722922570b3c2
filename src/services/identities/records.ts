/**
 * Identity rows and their named rate limits in SQLite. Every function runs in the caller's
 * transaction (or none) and reads only live (not deleted) identities unless it says otherwise.
 */
import { and, asc, eq, gte, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { identities, ratelimitConfigs } from "../../storage/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import { likeContains } from "../../lib/like.ts";

export interface IdentitySummary {
  id: string;
  externalId: string;
  meta: Record<string, unknown> | null;
}

export interface RatelimitConfig {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

/** A named limit as a client sends it (`autoApply` defaults to false). */
export interface RatelimitInput {
  name: string;
  limit: number;
  duration: number;
  autoApply?: boolean;
}

const summaryColumns = { id: identities.id, externalId: identities.externalId, meta: identities.meta };

/** The live identity with this externalId, created (meta `{}`) when missing. Runs in the caller's transaction. */
export function upsertIdentity(db: Db, workspaceId: string, externalId: string, nowMs: number): IdentitySummary {
  const found = findIdentityByExternalId(db, workspaceId, externalId);
  if (found) return found;
  const row = { id: newId("id"), workspaceId, externalId, meta: {}, createdAt: nowMs };
  db.insert(identities).values(row).run();
  return { id: row.id, externalId, meta: row.meta };
}

export function findIdentityByExternalId(db: Db, workspaceId: string, externalId: string): IdentitySummary | undefined {
  return db.select(summaryColumns).from(identities)
    .where(and(eq(identities.workspaceId, workspaceId), eq(identities.externalId, externalId), isNull(identities.deletedAt))).get();
}

/** The live identity with this id, if any. */
export function findIdentityById(db: Db, identityId: string): IdentitySummary | undefined {
  return db.select(summaryColumns).from(identities)
    .where(and(eq(identities.id, identityId), isNull(identities.deletedAt))).get();
}

/** The live identity of the workspace whose id, or else whose externalId, is `ref`. */
export function findLiveIdentity(db: Db, workspaceId: string, ref: string): IdentitySummary | undefined {
  const byId = db.select(summaryColumns).from(identities)
    .where(and(eq(identities.id, ref), eq(identities.workspaceId, workspaceId), isNull(identities.deletedAt))).get();
  return byId ?? findIdentityByExternalId(db, workspaceId, ref);
}

/** Whose named limits: a key's or an identity's. */
export type RatelimitOwner = { keyId: string } | { identityId: string };

/** The named limits configured on a key or an identity, by name. */
export function loadRatelimitConfigs(db: Db, owner: RatelimitOwner): RatelimitConfig[] {
  const where = "keyId" in owner ? eq(ratelimitConfigs.keyId, owner.keyId) : eq(ratelimitConfigs.identityId, owner.identityId);
  return db.select({ id: ratelimitConfigs.id, name: ratelimitConfigs.name, limit: ratelimitConfigs.limit, duration: ratelimitConfigs.durationMs, autoApply: ratelimitConfigs.autoApply })
    .from(ratelimitConfigs).where(where).orderBy(ratelimitConfigs.name).all();
}

/** The limits of several identities at once, by identity id (each list by name). */
export function loadIdentityRatelimits(db: Db, identityIds: readonly string[]): Map<string, RatelimitConfig[]> {
  const byIdentity = new Map<string, RatelimitConfig[]>(identityIds.map((id) => [id, []]));
  if (identityIds.length === 0) return byIdentity;
  const rows = db.select({ identityId: ratelimitConfigs.identityId, id: ratelimitConfigs.id, name: ratelimitConfigs.name, limit: ratelimitConfigs.limit, duration: ratelimitConfigs.durationMs, autoApply: ratelimitConfigs.autoApply })
    .from(ratelimitConfigs).where(inArray(ratelimitConfigs.identityId, [...identityIds])).orderBy(ratelimitConfigs.name).all();
  for (const { identityId, ...config } of rows) {
    if (identityId !== null) byIdentity.get(identityId)?.push(config);
  }
  return byIdentity;
}

/**
 * Makes `limits` the owner's complete set of named limits, matched by name: a kept name keeps its
 * id (and so its counters' history), a missing name is deleted, a new one is created.
 */
export function replaceRatelimits(db: Db, workspaceId: string, owner: RatelimitOwner, limits: readonly RatelimitInput[], nowMs: number): void {
  const existing = new Map(loadRatelimitConfigs(db, owner).map((c) => [c.name, c]));
  const wanted = new Set(limits.map((l) => l.name));
  const removed = [...existing.values()].filter((c) => !wanted.has(c.name)).map((c) => c.id);
  if (removed.length > 0) db.delete(ratelimitConfigs).where(inArray(ratelimitConfigs.id, removed)).run();
  for (const l of limits) {
    const kept = existing.get(l.name);
    const values = { limit: l.limit, durationMs: l.duration, autoApply: l.autoApply ?? false };
    if (kept) {
      db.update(ratelimitConfigs).set({ ...values, updatedAt: nowMs }).where(eq(ratelimitConfigs.id, kept.id)).run();
    } else {
      db.insert(ratelimitConfigs).values({ id: newId("rl"), workspaceId, ...owner, name: l.name, ...values, createdAt: nowMs }).run();
    }
  }
}

/**
 * Up to `limit` live identities of the workspace by id ascending, from `cursor` (inclusive), whose
 * id or externalId contains `search` (case-insensitive; blank matches all).
 */
export function listLiveIdentities(db: Db, workspaceId: string, opts: { limit: number; cursor?: string; search?: string }): IdentitySummary[] {
  const conditions: SQL[] = [eq(identities.workspaceId, workspaceId), isNull(identities.deletedAt)];
  if (opts.cursor !== undefined) conditions.push(gte(identities.id, opts.cursor));
  const search = opts.search?.trim() ?? "";
  if (search !== "") {
    const pattern = likeContains(search);
    const matches = or(sql`${identities.id} LIKE ${pattern} ESCAPE '\\'`, sql`${identities.externalId} LIKE ${pattern} ESCAPE '\\'`);
    if (matches) conditions.push(matches);
  }
  return db.select(summaryColumns).from(identities).where(and(...conditions)).orderBy(asc(identities.id)).limit(opts.limit).all();
}
