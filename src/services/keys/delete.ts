/**
 * keys.deleteKey. A soft delete sets `deleted_at` (the key then verifies NOT_FOUND and no longer
 * appears anywhere); a permanent one removes the row with its permissions, roles and limits.
 * A key that is already soft-deleted is not found.
 */
import { then, type Maybe } from "../../storage/work.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import type { KeyDeps } from "./create.ts";
import { mutateKey } from "./target.ts";

export interface DeleteKeyInput {
  keyId: string;
  permanent?: boolean;
}

/** Deletes a key; needs `delete_key` on its API. */
export function deleteKey(deps: KeyDeps, principal: Principal, input: DeleteKeyInput): Maybe<Record<string, never>> {
  const permanent = input.permanent ?? false;
  const deleted = mutateKey(deps, principal, input.keyId, {
    event: "key.delete",
    *authorize(t) {
      requirePermission(principal, "api", t.api.id, "delete_key");
    },
    *apply(t, now, r) {
      yield permanent ? r.keys.deletePermanently(t.row.id) : r.keys.update(t.row.id, { deletedAt: now });
    },
    describe: (t) => `${permanent ? "Permanently deleted" : "Deleted"} key ${t.row.id}`,
  });
  return then(deleted, () => ({}));
}
