/**
 * Permission lookup by slug, shared by key and role operations. A slug names the permission with
 * that slug, compared ignoring case as the unique index compares; a missing one is created on the
 * fly with name = slug. A slug is never resolved through a permission's name: when the name it
 * would get already belongs to a permission with another slug, creating it is a 409, because
 * reusing that permission would grant something the caller did not name.
 */
import { DuplicateRecord, LostRace, type Records } from "../../storage/records/index.ts";
import { step, type Work } from "../../storage/work.ts";
import { newId } from "../../lib/ids.ts";
import { AppError } from "../../errors/app-error.ts";

/** 409 when another permission already carries the name a new permission with this slug would get. */
function* assertNameFree(records: Records, workspaceId: string, slug: string): Work<void> {
  const holder = yield* step(records.rbac.permissionNamed(workspaceId, slug));
  if (!holder) return;
  throw new AppError("permission_already_exists", {
    detail: `Permission '${slug}' cannot be created: the permission '${holder.slug}' is already named '${holder.name}' in this workspace. Use its slug, or rename it.`,
  });
}

/** The slugs (unique, in order) for which ensurePermissions would create a new permission. */
export function* missingPermissionSlugsIn(records: Records, workspaceId: string, slugs: readonly string[]): Work<string[]> {
  const missing: string[] = [];
  for (const slug of new Set(slugs)) {
    if ((yield* step(records.rbac.permissionIdBySlug(workspaceId, slug))) === undefined) missing.push(slug);
  }
  return missing;
}

/**
 * Ids of the permissions with these slugs, creating the missing ones; unique, in the order of
 * `slugs` (slugs differing only in case name one permission). 409 `permission_already_exists`
 * when a missing slug's name is taken by another permission.
 */
export function* ensurePermissionsIn(records: Records, workspaceId: string, slugs: readonly string[], nowMs: number): Work<string[]> {
  const ids: string[] = [];
  for (const slug of new Set(slugs)) {
    // Looked up one by one so that a slug differing only in case from one just created reuses it.
    let id = yield* step(records.rbac.permissionIdBySlug(workspaceId, slug));
    if (id === undefined) {
      yield* assertNameFree(records, workspaceId, slug);
      id = newId("perm");
      try {
        yield records.rbac.insertPermission({ id, workspaceId, name: slug, slug, description: `Auto-created permission: ${slug}`, createdAt: nowMs });
      } catch (error) {
        // Created by a unit that committed since this one looked (cluster): run again, which finds it.
        if (error instanceof DuplicateRecord) throw new LostRace(`permission '${slug}' created`, { cause: error });
        throw error;
      }
    }
    ids.push(id);
  }
  return [...new Set(ids)];
}
