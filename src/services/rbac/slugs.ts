/**
 * Permission lookup by slug, shared by key and role operations. A slug names the permission with
 * that slug, compared ignoring case as the unique index compares; a missing one is created on the
 * fly with name = slug. A slug is never resolved through a permission's name: when the name it
 * would get already belongs to a permission with another slug, creating it is a 409, because
 * reusing that permission would grant something the caller did not name.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { permissions } from "../../storage/schema/index.ts";
import { newId } from "../../lib/ids.ts";
import { AppError } from "../../errors/app-error.ts";

/** The permission with this slug ignoring case (the unique index allows one at most), if any. */
function findBySlug(db: Db, workspaceId: string, slug: string): string | undefined {
  return db.select({ id: permissions.id }).from(permissions)
    .where(and(eq(permissions.workspaceId, workspaceId), sql`lower(${permissions.slug}) = lower(${slug})`)).get()?.id;
}

/** 409 when another permission already carries the name a new permission with this slug would get. */
function assertNameFree(db: Db, workspaceId: string, slug: string): void {
  const holder = db.select({ name: permissions.name, slug: permissions.slug }).from(permissions)
    .where(and(eq(permissions.workspaceId, workspaceId), sql`lower(${permissions.name}) = lower(${slug})`)).limit(1).get();
  if (!holder) return;
  throw new AppError("permission_already_exists", {
    detail: `Permission '${slug}' cannot be created: the permission '${holder.slug}' is already named '${holder.name}' in this workspace. Use its slug, or rename it.`,
  });
}

/** The slugs (unique, in order) for which ensurePermissions would create a new permission. */
export function missingPermissionSlugs(db: Db, workspaceId: string, slugs: readonly string[]): string[] {
  return [...new Set(slugs)].filter((slug) => findBySlug(db, workspaceId, slug) === undefined);
}

/**
 * Ids of the permissions with these slugs, creating the missing ones; unique, in the order of
 * `slugs` (slugs differing only in case name one permission). 409 `permission_already_exists`
 * when a missing slug's name is taken by another permission.
 */
export function ensurePermissions(db: Db, workspaceId: string, slugs: readonly string[], nowMs: number): string[] {
  const ids: string[] = [];
  for (const slug of new Set(slugs)) {
    // Looked up one by one so that a slug differing only in case from one just created reuses it.
    let id = findBySlug(db, workspaceId, slug);
    if (id === undefined) {
      assertNameFree(db, workspaceId, slug);
      id = newId("perm");
      db.insert(permissions).values({ id, workspaceId, name: slug, slug, description: `Auto-created permission: ${slug}`, createdAt: nowMs }).run();
    }
    ids.push(id);
  }
  return [...new Set(ids)];
}
