/**
 * keys.rerollKey: issues a new key that copies the old one (name, meta, identity, enabled, credits
 * and refill, expiry, direct permissions, roles, key-level limits under new ids, and recoverability)
 * and makes the old key expire `expiration` ms from now, rounded up to the next whole minute
 * (0 = now), so that clients have time to switch. A reroll never extends the old key's life: an
 * old key that was due to expire sooner keeps its expiry.
 */
import type { KeySpaceRecord, Records } from "../../storage/records/index.ts";
import { step, then, type Maybe, type Work } from "../../storage/work.ts";
import { newId, randomKeyPart } from "../../lib/ids.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { AppError } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { replaceRatelimitsIn } from "../identities/index.ts";
import { assertStoresEncryptedKeys, type KeyDeps } from "./create.ts";
import { ACCESS_GRANTS, requireRbac } from "./grants.ts";
import { andThen } from "./and-then.ts";
import { findKeyTargetIn, keyResources, KEY_NOT_FOUND, mutateKey, type KeyTarget } from "./target.ts";
import type { Vault } from "./vault.ts";
import type { KeyRow } from "./view.ts";

export interface RerollKeyInput {
  keyId: string;
  /** Milliseconds from now until the old key expires; 0 expires it at once. */
  expiration: number;
}

const DEFAULT_BYTE_LENGTH = 16;
const MINUTE_MS = 60_000;

interface NewKey {
  keyId: string;
  key: string;
  hash: string;
}

const isRecoverable = (row: KeyRow) => row.encrypted !== null;

/**
 * When the old key expires: now + expiration rounded up to a whole minute (now for 0), or its
 * current expiry when that comes first.
 */
export function oldKeyExpiresAt(nowMs: number, expirationMs: number, currentExpiresAt: number | null): number {
  const grace = expirationMs === 0 ? nowMs : Math.ceil((nowMs + expirationMs) / MINUTE_MS) * MINUTE_MS;
  return currentExpiresAt === null ? grace : Math.min(grace, currentExpiresAt);
}

/** The prefix of a key from its `start` (`<prefix>_` + 4 base58 characters, which hold no `_`). */
function prefixOf(start: string): string | undefined {
  const cut = start.lastIndexOf("_");
  return cut > 0 ? start.slice(0, cut) : undefined;
}

/** Whether the key holds direct permissions, and whether it holds roles. */
function* heldAccessIn(records: Records, keyId: string): Work<{ permissions: boolean; roles: boolean }> {
  return {
    permissions: (yield* step(records.keys.permissionIdsOf(keyId))).length > 0,
    roles: (yield* step(records.keys.roleIdsOf(keyId))).length > 0,
  };
}

/**
 * Rerolls a key; needs what keys.createKey would need to create the copy: `create_key` on its API,
 * `encrypt_key` when the key is recoverable, and the grants of keys.addPermissions / keys.addRoles
 * when it holds direct permissions / roles (upstream asks only the first two, which would let a
 * `create_key` holder mint a copy of any key it can name, admin permissions included).
 * 404 for a missing key, 412 when a recoverable key's API no longer stores encrypted keys.
 */
export function rerollKey(deps: KeyDeps, principal: Principal, input: RerollKeyInput): Maybe<{ keyId: string; key: string }> {
  const authorize = function* (t: KeyTarget, r: Records): Work<void> {
    requirePermission(principal, "api", t.api.id, "create_key");
    if (isRecoverable(t.row)) requirePermission(principal, "api", t.api.id, "encrypt_key");
    const held = yield* heldAccessIn(r, t.row.id);
    if (held.permissions) requireRbac(principal, ACCESS_GRANTS.addPermissions);
    if (held.roles) requireRbac(principal, ACCESS_GRANTS.addRoles);
  };
  const checked = deps.records.read(function* (r) {
    const before = yield* findKeyTargetIn(r, principal, input.keyId, KEY_NOT_FOUND);
    yield* authorize(before, r);
    const space = yield* step(r.keys.findKeySpace(before.row.keySpaceId));
    if (!space) throw new AppError("key_space_not_found", { detail: "The key space of this key's API does not exist." });
    if (isRecoverable(before.row)) assertStoresEncryptedKeys(space);
    return { space, recoverable: isRecoverable(before.row) };
  });
  const prepared = andThen(checked, (c) => c.recoverable ? then(deps.vault.prepare(principal.workspaceId), () => c.space) : c.space);
  return andThen(prepared, (space) => {
    const created = mutateKey(deps, principal, input.keyId, {
      missingDetail: KEY_NOT_FOUND,
      event: "key.reroll",
      grows: true,
      authorize,
      *apply(t, now, r) {
        const fresh = yield* insertCopyIn(r, deps.vault, t.row, space, now);
        yield r.keys.update(t.row.id, { expiresAt: oldKeyExpiresAt(now, input.expiration, t.row.expiresAt) });
        return fresh;
      },
      describe: (t, fresh) => `Rerolled key ${t.row.id} to ${fresh.keyId}`,
      resources: (t, fresh) => [{ type: "key", id: fresh.keyId, ...(t.row.name !== null ? { name: t.row.name } : {}) }, ...keyResources(t)],
    });
    return then(created, (fresh) => {
      deps.cache.keyCreated(fresh.hash);
      return { keyId: fresh.keyId, key: fresh.key };
    });
  });
}

/** Inserts the new key with everything it copies from `old`. */
function* insertCopyIn(r: Records, vault: Vault, old: KeyRow, space: KeySpaceRecord, nowMs: number): Work<NewKey> {
  const prefix = prefixOf(old.start) ?? space.defaultPrefix ?? undefined;
  const random = randomKeyPart(space.defaultBytes ?? DEFAULT_BYTE_LENGTH);
  const key = prefix ? `${prefix}_${random}` : random;
  const keyId = newId("key");
  const hash = sha256Base64(key);
  yield r.keys.insert({
    id: keyId, workspaceId: old.workspaceId, keySpaceId: old.keySpaceId, hash,
    start: prefix ? `${prefix}_${random.slice(0, 4)}` : random.slice(0, 4),
    name: old.name, identityId: old.identityId, meta: old.meta, expiresAt: old.expiresAt, enabled: old.enabled,
    remaining: old.remaining, refillAmount: old.refillAmount, refillDay: old.refillDay, lastRefillAt: old.lastRefillAt,
    recoverable: old.recoverable, encrypted: isRecoverable(old) ? vault.encrypt(old.workspaceId, key) : null,
    createdAt: nowMs,
  });
  yield* copyLinksIn(r, old, keyId, nowMs);
  return { keyId, key, hash };
}

/** Copies direct permissions, roles and key-level limits (new ids) from `old` to `keyId`. */
function* copyLinksIn(r: Records, old: KeyRow, keyId: string, nowMs: number): Work<void> {
  const ws = old.workspaceId;
  yield r.keys.addPermissions(ws, keyId, yield* step(r.keys.permissionIdsOf(old.id)), nowMs);
  yield r.keys.addRoles(ws, keyId, yield* step(r.keys.roleIdsOf(old.id)), nowMs);
  yield* replaceRatelimitsIn(r, ws, { keyId }, yield* step(r.limits.load({ keyId: old.id })), nowMs);
}
