/**
 * keys.updateKey: a partial update in which every field is three-state: left out = unchanged,
 * null = cleared, a value = set. `ratelimits`, `roles` and `permissions` replace the key's set when
 * present. One unit of work, one `key.update` audit entry.
 */
import type { KeyPatch, Records } from "../../storage/records/index.ts";
import { then, type Maybe, type Work } from "../../storage/work.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { findRoleIdsIn } from "../rbac/index.ts";
import { replaceRatelimitsIn, upsertIdentityIn } from "../identities/index.ts";
import { assertMetaSize } from "../meta/index.ts";
import { assertUniqueLimitNames, type KeyDeps } from "./create.ts";
import { creditsPatch, type UpdateKeyCreditsInput } from "./credits.ts";
import { ACCESS_GRANTS, permissionIdsForIn, requireRbac } from "./grants.ts";
import { mutateKey, type KeyTarget } from "./target.ts";
import type { RatelimitInput } from "./types.ts";

export interface UpdateKeyInput {
  keyId: string;
  name?: string | null;
  externalId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  credits?: UpdateKeyCreditsInput | null;
  ratelimits?: RatelimitInput[];
  enabled?: boolean;
  roles?: string[];
  permissions?: string[];
}

/**
 * Applies an update; needs `update_key` on the key's API, and since `permissions` and `roles` replace
 * the key's set, the grants of keys.setPermissions / keys.setRoles. 404 for an unknown role, 400 for bad credits.
 */
export function updateKey(deps: KeyDeps, principal: Principal, input: UpdateKeyInput): Maybe<Record<string, never>> {
  if (input.ratelimits) assertUniqueLimitNames(input.ratelimits, "body.ratelimits");
  assertMetaSize(input.meta);
  const updated = mutateKey(deps, principal, input.keyId, {
    event: "key.update",
    grows: true,
    *authorize(t) {
      requirePermission(principal, "api", t.api.id, "update_key");
      if (input.permissions) requireRbac(principal, ACCESS_GRANTS.setPermissions);
      if (input.roles) requireRbac(principal, ACCESS_GRANTS.setRoles);
    },
    apply: (t, now, r) => applyUpdate(r, principal, t, input, now),
    describe: (t) => `Updated key ${t.row.id}: ${changedFields(input).join(", ") || "nothing"}`,
  });
  return then(updated, () => ({}));
}

function* applyUpdate(r: Records, principal: Principal, target: KeyTarget, input: UpdateKeyInput, nowMs: number): Work<void> {
  const { row } = target;
  const ws = row.workspaceId;
  const credits = creditsPatch(input.credits, row, nowMs);
  const roleIds = input.roles ? yield* findRoleIdsIn(r, ws, input.roles) : undefined;
  const columns: KeyPatch = { ...credits };
  if (input.name !== undefined) columns.name = input.name;
  if (input.meta !== undefined) columns.meta = input.meta;
  if (input.expires !== undefined) columns.expiresAt = input.expires;
  if (input.enabled !== undefined) columns.enabled = input.enabled;
  if (input.externalId !== undefined) {
    columns.identityId = input.externalId === null ? null : (yield* upsertIdentityIn(r, ws, input.externalId, nowMs)).id;
  }
  if (Object.keys(columns).length > 0) yield r.keys.update(row.id, columns);
  if (input.ratelimits) yield* replaceRatelimitsIn(r, row.workspaceId, { keyId: row.id }, input.ratelimits, nowMs);
  if (input.permissions) yield r.rbac.setKeyPermissions(ws, row.id, yield* permissionIdsForIn(r, principal, input.permissions, nowMs), nowMs);
  if (roleIds) yield r.rbac.setKeyRoles(ws, row.id, roleIds, nowMs);
}

/** The fields an update touches, for the audit description. */
function changedFields(input: UpdateKeyInput): string[] {
  return Object.entries(input).filter(([field, value]) => field !== "keyId" && value !== undefined).map(([field]) => field);
}
