/**
 * Everything a verification needs to know about one key, loaded in one go. This is the unit the
 * key cache will hold, so it carries no derived state that could go stale on its own.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { apis, keys } from "../../storage/schema/index.ts";
import { loadKeyAccess } from "../rbac/index.ts";
import { findIdentityById, loadRatelimitConfigs, type RatelimitConfig } from "../identities/index.ts";

export interface KeySnapshot {
  keyId: string;
  workspaceId: string;
  keySpaceId: string;
  apiId: string | null;
  apiDeleted: boolean;
  name: string | null;
  meta: Record<string, unknown> | null;
  expiresAt: number | null;
  enabled: boolean;
  deleted: boolean;
  remaining: number | null;
  roles: string[];
  permissions: string[];
  identity: { id: string; externalId: string; meta: Record<string, unknown> | null; ratelimits: RatelimitConfig[] } | null;
  ratelimits: RatelimitConfig[];
}

/** Loads the snapshot of the key with this hash, or undefined when no key has it. */
export function loadKeySnapshot(db: Db, hash: string): KeySnapshot | undefined {
  const row = db.select({ key: keys, apiId: apis.id, apiDeletedAt: apis.deletedAt })
    .from(keys).leftJoin(apis, eq(apis.keySpaceId, keys.keySpaceId))
    .where(eq(keys.hash, hash)).get();
  if (!row) return undefined;
  const k = row.key;
  const access = loadKeyAccess(db, k.id);
  const identity = k.identityId ? findIdentityById(db, k.identityId) : undefined;
  return {
    keyId: k.id,
    workspaceId: k.workspaceId,
    keySpaceId: k.keySpaceId,
    apiId: row.apiId,
    apiDeleted: row.apiId === null || row.apiDeletedAt !== null,
    name: k.name,
    meta: k.meta,
    expiresAt: k.expiresAt,
    enabled: k.enabled,
    deleted: k.deletedAt !== null,
    remaining: k.remaining,
    roles: access.roles,
    permissions: access.permissions,
    identity: identity ? { ...identity, ratelimits: loadRatelimitConfigs(db, { identityId: identity.id }) } : null,
    ratelimits: loadRatelimitConfigs(db, { keyId: k.id }),
  };
}
