/** keys.createKey: validates the cross-field rules, then stores the key and everything attached to it in one unit of work. */
import type { RecordBackend } from "../../storage/records/index.ts";
import { step, then, type Maybe } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, randomKeyPart } from "../../lib/ids.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { AppError, invalidInput } from "../../errors/app-error.ts";
import { writeAudit } from "../audit/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { liveApi } from "../apis/index.ts";
import { findRoleIdsIn } from "../rbac/index.ts";
import { replaceRatelimitsIn, upsertIdentityIn } from "../identities/index.ts";
import { assertMetaSize } from "../meta/index.ts";
import type { KeyCacheInvalidator } from "../key-cache/index.ts";
import type { CreditBalances } from "../credits/index.ts";
import { withinQuotas, type WorkspaceQuotas } from "../quotas/index.ts";
import { ACCESS_GRANTS, permissionIdsForIn, requireRbac } from "./grants.ts";
import { andThen } from "./and-then.ts";
import type { Vault } from "./vault.ts";
import type { CreateKeyInput, CreditsInput, RatelimitInput } from "./types.ts";

export interface KeyDeps {
  records: RecordBackend;
  clock: Clock;
  vault: Vault;
  cache: KeyCacheInvalidator;
  /** Balances include spends not yet folded into keys.remaining: settle before writing it, subtract when showing it. */
  credits: CreditBalances;
  /** Bytes of items one list page may hold (TOLLGATE_LIST_PAGE_BYTES); 4 MiB when left out. */
  pageBytes?: number;
  /** What a workspace may hold; DEFAULT_QUOTAS when left out. */
  quotas?: WorkspaceQuotas;
}

const DEFAULT_BYTE_LENGTH = 16;
/** keys.createKey's own words for a missing API (upstream's), not apis.getApi's. */
const API_NOT_FOUND = "The specified API was not found.";

/** Credits as stored: remaining (null = unlimited), refill amount and day. Throws 400 on a bad combination. */
export function creditsColumns(credits: CreditsInput | undefined): { remaining: number | null; refillAmount: number | null; refillDay: number | null } {
  if (!credits) return { remaining: null, refillAmount: null, refillDay: null };
  const remaining = credits.remaining ?? null;
  const refill = credits.refill;
  if (!refill) return { remaining, refillAmount: null, refillDay: null };
  if (remaining === null) {
    throw invalidInput("body.credits.remaining", "`credits.remaining` must be provided when `credits.refill` is set.");
  }
  if (refill.interval === "monthly") {
    if (refill.refillDay === undefined) {
      throw invalidInput("body.credits.refill.refillDay", "`refillDay` must be provided when the refill interval is `monthly`.");
    }
    return { remaining, refillAmount: refill.amount, refillDay: refill.refillDay };
  }
  return { remaining, refillAmount: refill.amount, refillDay: null };
}

/** Throws 400 when two limits share a name. */
export function assertUniqueLimitNames(limits: readonly RatelimitInput[], location: string): void {
  const seen = new Set<string>();
  for (const l of limits) {
    if (seen.has(l.name)) throw invalidInput(location, `Ratelimit with name '${l.name}' is already defined in the request`);
    seen.add(l.name);
  }
}

/** 412 unless the key space stores encrypted keys, which a recoverable key needs. */
export function assertStoresEncryptedKeys(space: { storeEncryptedKeys: boolean } | undefined): void {
  if (!space?.storeEncryptedKeys) throw new AppError("precondition_failed", { detail: "This API does not support key encryption." });
}

/**
 * Creates a key; returns its id and the only copy of the key string. Needs `create_key` on the API;
 * `recoverable` adds `encrypt_key`, `permissions` the grants of keys.addPermissions, `roles` those of keys.addRoles.
 */
export function createKey(deps: KeyDeps, principal: Principal, input: CreateKeyInput): Maybe<{ keyId: string; key: string }> {
  requirePermission(principal, "api", input.apiId, "create_key");
  if (input.recoverable) requirePermission(principal, "api", input.apiId, "encrypt_key");
  if (input.permissions?.length) requireRbac(principal, ACCESS_GRANTS.addPermissions);
  if (input.roles?.length) requireRbac(principal, ACCESS_GRANTS.addRoles);
  const credits = creditsColumns(input.credits);
  assertUniqueLimitNames(input.ratelimits ?? [], "body.ratelimits");
  assertMetaSize(input.meta);
  const ws = principal.workspaceId;
  const prepared = input.recoverable ? deps.vault.prepare(ws) : undefined;
  return andThen(prepared, () => {
    const now = deps.clock.now();
    const created = deps.records.write(ws, withinQuotas(deps.quotas, ws, function* (r) {
      const api = yield* liveApi(r, ws, input.apiId, API_NOT_FOUND);
      if (input.recoverable) assertStoresEncryptedKeys(yield* step(r.keys.findKeySpace(api.keySpaceId)));
      const roleIds = yield* findRoleIdsIn(r, ws, input.roles ?? []);
      const permissionIds = yield* permissionIdsForIn(r, principal, input.permissions ?? [], now);
      const identity = input.externalId ? yield* upsertIdentityIn(r, ws, input.externalId, now) : undefined;
      const random = randomKeyPart(input.byteLength ?? DEFAULT_BYTE_LENGTH);
      const key = input.prefix ? `${input.prefix}_${random}` : random;
      const keyId = newId("key");
      const hash = sha256Base64(key);
      yield r.keys.insert({
        id: keyId, workspaceId: ws, keySpaceId: api.keySpaceId, hash,
        start: input.prefix ? `${input.prefix}_${random.slice(0, 4)}` : random.slice(0, 4),
        name: input.name ?? null, identityId: identity?.id ?? null, meta: input.meta ?? null,
        expiresAt: input.expires ?? null, enabled: input.enabled ?? true, ...credits,
        lastRefillAt: credits.refillAmount !== null ? now : null,
        recoverable: input.recoverable ?? false, encrypted: input.recoverable ? deps.vault.encrypt(ws, key) : null,
        createdAt: now,
      });
      // A new key has no links to replace: adding them spares a statement each when there are none.
      yield r.keys.addPermissions(ws, keyId, permissionIds, now);
      yield r.keys.addRoles(ws, keyId, roleIds, now);
      if (input.ratelimits?.length) yield* replaceRatelimitsIn(r, ws, { keyId }, input.ratelimits, now);
      yield writeAudit(r, {
        workspaceId: ws, event: "key.create", actor: principal.actor, timeMs: now,
        resources: [{ type: "api", id: api.id, name: api.name }, { type: "key", id: keyId, ...(input.name ? { name: input.name } : {}) }],
        description: `Created key ${keyId} in API ${api.id}`,
      });
      return { keyId, key, hash };
    }));
    return then(created, ({ keyId, key, hash }) => {
      deps.cache.keyCreated(hash);
      return { keyId, key };
    });
  });
}
