/**
 * keys.updateKey: a partial update in which every field is three-state: left out = unchanged,
 * null = cleared, a value = set. `ratelimits`, `roles` and `permissions` replace the key's set when
 * present. One transaction, one `key.update` audit entry.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { keys, ratelimitConfigs } from "../../storage/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { ensurePermissions, findRoleIds, setKeyPermissions, setKeyRoles } from "../rbac/index.ts";
import { upsertIdentity } from "../identities/index.ts";
import { assertUniqueLimitNames, type KeyDeps } from "./create.ts";
import { creditsPatch, type UpdateKeyCreditsInput } from "./credits.ts";
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

/** Applies an update; needs `update_key` on the key's API. 404 for an unknown role, 400 for bad credits. */
export function updateKey(deps: KeyDeps, principal: Principal, input: UpdateKeyInput): Record<string, never> {
  const { db } = deps.storage;
  if (input.ratelimits) assertUniqueLimitNames(input.ratelimits, "body.ratelimits");
  mutateKey(deps, principal, input.keyId, {
    event: "key.update",
    authorize: (t) => requirePermission(principal, "api", t.api.id, "update_key"),
    apply: (t, now) => applyUpdate(db, t, input, now),
    describe: (t) => `Updated key ${t.row.id}: ${changedFields(input).join(", ") || "nothing"}`,
  });
  return {};
}

function applyUpdate(db: Db, target: KeyTarget, input: UpdateKeyInput, nowMs: number): void {
  const { row } = target;
  const ws = row.workspaceId;
  const credits = creditsPatch(input.credits, row, nowMs);
  const roleIds = input.roles ? findRoleIds(db, ws, input.roles) : undefined;
  const columns: Partial<typeof keys.$inferInsert> = { ...credits };
  if (input.name !== undefined) columns.name = input.name;
  if (input.meta !== undefined) columns.meta = input.meta;
  if (input.expires !== undefined) columns.expiresAt = input.expires;
  if (input.enabled !== undefined) columns.enabled = input.enabled;
  if (input.externalId !== undefined) {
    columns.identityId = input.externalId === null ? null : upsertIdentity(db, ws, input.externalId, nowMs).id;
  }
  if (Object.keys(columns).length > 0) db.update(keys).set(columns).where(eq(keys.id, row.id)).run();
  if (input.ratelimits) replaceKeyRatelimits(db, row, input.ratelimits, nowMs);
  if (input.permissions) setKeyPermissions(db, ws, row.id, ensurePermissions(db, ws, input.permissions, nowMs), nowMs);
  if (roleIds) setKeyRoles(db, ws, row.id, roleIds, nowMs);
}

/** Replaces a key's named limits by name: a kept name keeps its id, a new name is added, a missing one deleted. */
export function replaceKeyRatelimits(db: Db, row: Pick<typeof keys.$inferSelect, "id" | "workspaceId">, limits: readonly RatelimitInput[], nowMs: number): void {
  const existing = db.select({ id: ratelimitConfigs.id, name: ratelimitConfigs.name }).from(ratelimitConfigs)
    .where(eq(ratelimitConfigs.keyId, row.id)).all();
  const wanted = new Set(limits.map((l) => l.name));
  const gone = existing.filter((e) => !wanted.has(e.name)).map((e) => e.id);
  if (gone.length > 0) db.delete(ratelimitConfigs).where(and(eq(ratelimitConfigs.keyId, row.id), inArray(ratelimitConfigs.id, gone))).run();
  const idByName = new Map(existing.map((e) => [e.name, e.id]));
  for (const l of limits) {
    const values = { name: l.name, limit: l.limit, durationMs: l.duration, autoApply: l.autoApply ?? false };
    const id = idByName.get(l.name);
    if (id) db.update(ratelimitConfigs).set({ ...values, updatedAt: nowMs }).where(eq(ratelimitConfigs.id, id)).run();
    else db.insert(ratelimitConfigs).values({ id: newId("rl"), workspaceId: row.workspaceId, keyId: row.id, ...values, createdAt: nowMs }).run();
  }
}

/** The fields an update touches, for the audit description. */
function changedFields(input: UpdateKeyInput): string[] {
  return Object.entries(input).filter(([field, value]) => field !== "keyId" && value !== undefined).map(([field]) => field);
}
