/**
 * The key a management operation works on, and the one way such an operation changes it: a unit of
 * work that finds the key, checks the root key's permissions, writes, and records one audit entry;
 * then the key's cache entry is dropped, before the caller answers.
 */
import type { Records } from "../../storage/records/index.ts";
import { step, then, type Maybe, type Work } from "../../storage/work.ts";
import { AppError } from "../../errors/app-error.ts";
import { writeAudit, type AuditResource } from "../audit/index.ts";
import type { Principal } from "../auth/index.ts";
import type { ApiRecord } from "../apis/index.ts";
import type { KeyDeps } from "./create.ts";
import type { KeyRow } from "./view.ts";
import { withinQuotas } from "../quotas/index.ts";

/** 404 detail for a missing key on getKey, whoami, updateKey, deleteKey and updateCredits (upstream's wording). */
export const KEY_MISSING = "We could not find the requested key.";
/** 404 detail for a missing key on the permission, role and reroll routes (upstream's wording). */
export const KEY_NOT_FOUND = "The specified key was not found.";

/** The one 404 of a route for a key it cannot see: missing, deleted, of a deleted API, or of another workspace. */
export function keyNotFound(detail: string): AppError {
  return new AppError("key_not_found", { detail });
}

export interface KeyTarget {
  row: KeyRow;
  api: ApiRecord;
}

/**
 * The live key `keyId` in the principal's workspace, with its live API; otherwise 404 `key_not_found`
 * with `missingDetail`, the same answer whether the id never existed or belongs to another workspace
 * (a key of another workspace is never read, so it cannot answer differently).
 */
export function* findKeyTargetIn(records: Records, principal: Principal, keyId: string, missingDetail = KEY_MISSING): Work<KeyTarget> {
  const row = yield* step(records.keys.findInWorkspace(principal.workspaceId, keyId));
  const api = row && (yield* step(records.apis.findByKeySpace(principal.workspaceId, row.keySpaceId)));
  if (!row || !api) throw keyNotFound(missingDetail);
  return { row, api };
}

/** The key and its API, as audit resources. */
export function keyResources(target: KeyTarget): AuditResource[] {
  const { row, api } = target;
  return [{ type: "key", id: row.id, ...(row.name !== null ? { name: row.name } : {}) }, { type: "api", id: api.id, name: api.name }];
}

export interface KeyMutation<T> {
  /** Detail of the 404 for a key id that no live key has (default KEY_MISSING). */
  missingDetail?: string;
  /** Throws 403 unless the principal may make this change; runs once the key is found. */
  authorize(target: KeyTarget, records: Records): Work<void>;
  /** The writes, inside the unit; `updated_at` is already set to `nowMs`. */
  apply(target: KeyTarget, nowMs: number, records: Records): Work<T>;
  /**
   * Whether the change may create records or grow them (a new key, identity, permission, link or a
   * bigger meta): such a change runs within the workspace quotas (services/quotas); others never wait for them.
   */
  grows?: boolean;
  /** Audit event, e.g. `key.update`. */
  event: string;
  describe(target: KeyTarget, result: T): string;
  /** Audit resources; default the key and its API. */
  resources?(target: KeyTarget, result: T): AuditResource[];
}

/**
 * Runs one change to key `keyId` as one unit of work with its audit entry, then drops the key from
 * the verification cache so that the very next verification sees the change. The key's pending
 * credit spends are folded into keys.remaining first.
 */
export function mutateKey<T>(deps: KeyDeps, principal: Principal, keyId: string, mutation: KeyMutation<T>): Maybe<T> {
  const now = deps.clock.now();
  // Any mutation may write or copy keys.remaining (credits, reroll), so it starts from the balance.
  deps.credits.settle([keyId]);
  const unit = function* (r: Records): Work<T> {
    // One change to a key at a time: it reads the key (deleted? its permissions, limits) and then writes it.
    yield r.locks.hold({ workspaceId: principal.workspaceId, kind: "key", id: keyId });
    const target = yield* findKeyTargetIn(r, principal, keyId, mutation.missingDetail);
    yield* mutation.authorize(target, r);
    yield r.keys.update(target.row.id, { updatedAt: now });
    const out = yield* mutation.apply(target, now, r);
    yield writeAudit(r, {
      workspaceId: principal.workspaceId, event: mutation.event, actor: principal.actor, timeMs: now,
      resources: mutation.resources ? mutation.resources(target, out) : keyResources(target),
      description: mutation.describe(target, out),
    });
    return out;
  };
  const ws = principal.workspaceId;
  const result = deps.records.write(ws, mutation.grows ? withinQuotas(deps.quotas, ws, unit) : unit);
  return then(result, (out) => {
    deps.cache.keyChanged(keyId);
    return out;
  });
}
