/**
 * Identities: the owner of keys outside the service, addressed by `externalId` (unique among live
 * identities of a workspace). Keys of one identity share its metadata and its rate limits.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { identities, ratelimitConfigs } from "../../storage/schema/index.ts";
import { newId } from "../../lib/ids.ts";

export interface IdentitySummary {
  id: string;
  externalId: string;
  meta: Record<string, unknown> | null;
}

/** The live identity with this externalId, created (meta `{}`) when missing. Runs in the caller's transaction. */
export function upsertIdentity(db: Db, workspaceId: string, externalId: string, nowMs: number): IdentitySummary {
  const found = findIdentityByExternalId(db, workspaceId, externalId);
  if (found) return found;
  const row = { id: newId("id"), workspaceId, externalId, meta: {}, createdAt: nowMs };
  db.insert(identities).values(row).run();
  return { id: row.id, externalId, meta: row.meta };
}

export function findIdentityByExternalId(db: Db, workspaceId: string, externalId: string): IdentitySummary | undefined {
  return db.select({ id: identities.id, externalId: identities.externalId, meta: identities.meta }).from(identities)
    .where(and(eq(identities.workspaceId, workspaceId), eq(identities.externalId, externalId), isNull(identities.deletedAt))).get();
}

/** The live identity with this id, if any. */
export function findIdentityById(db: Db, identityId: string): IdentitySummary | undefined {
  return db.select({ id: identities.id, externalId: identities.externalId, meta: identities.meta }).from(identities)
    .where(and(eq(identities.id, identityId), isNull(identities.deletedAt))).get();
}

export interface RatelimitConfig {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

/** The named limits configured on a key or an identity, by name. */
export function loadRatelimitConfigs(db: Db, owner: { keyId: string } | { identityId: string }): RatelimitConfig[] {
  const where = "keyId" in owner ? eq(ratelimitConfigs.keyId, owner.keyId) : eq(ratelimitConfigs.identityId, owner.identityId);
  return db.select({ id: ratelimitConfigs.id, name: ratelimitConfigs.name, limit: ratelimitConfigs.limit, duration: ratelimitConfigs.durationMs, autoApply: ratelimitConfigs.autoApply })
    .from(ratelimitConfigs).where(where).orderBy(ratelimitConfigs.name).all();
}
