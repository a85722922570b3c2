/**
 * keys.deleteKey. A soft delete sets `deleted_at` (the key then verifies NOT_FOUND and no longer
 * appears anywhere); a permanent one removes the row with its permissions, roles and limits.
 * A key that is already soft-deleted is not found.
 */
import { eq } from "drizzle-orm";
import { keyPermissions, keyRoles, keys, ratelimitConfigs } from "../../storage/schema/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import type { KeyDeps } from "./create.ts";
import { mutateKey } from "./target.ts";

export interface DeleteKeyInput {
  keyId: string;
  permanent?: boolean;
}

/** Deletes a key; needs `delete_key` on its API. */
export function deleteKey(deps: KeyDeps, principal: Principal, input: DeleteKeyInput): Record<string, never> {
  const { db } = deps.storage;
  const permanent = input.permanent ?? false;
  mutateKey(deps, principal, input.keyId, {
    event: "key.delete",
    authorize: (t) => requirePermission(principal, "api", t.api.id, "delete_key"),
    apply: (t, now) => {
      if (!permanent) {
        db.update(keys).set({ deletedAt: now }).where(eq(keys.id, t.row.id)).run();
        return;
      }
      db.delete(keyPermissions).where(eq(keyPermissions.keyId, t.row.id)).run();
      db.delete(keyRoles).where(eq(keyRoles.keyId, t.row.id)).run();
      db.delete(ratelimitConfigs).where(eq(ratelimitConfigs.keyId, t.row.id)).run();
      db.delete(keys).where(eq(keys.id, t.row.id)).run();
    },
    describe: (t) => `${permanent ? "Permanently deleted" : "Deleted"} key ${t.row.id}`,
  });
  return {};
}
