/**
 * Permission lookup by slug, shared by key and role operations. A slug matches a permission with
 * exactly that slug, or else one whose slug or name is equal ignoring case (the unique indexes
 * compare lower()); missing slugs are created on the fly with name = slug.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { permissions } from "../../storage/schema/index.ts";
import { newId } from "../../lib/ids.ts";

/** The id of the permission a slug would reuse, or undefined when ensurePermissions would create it. */
function findBySlugOrName(db: Db, workspaceId: string, slug: string): string | undefined {
  return db.select({ id: permissions.id }).from(permissions)
    .where(and(eq(permissions.workspaceId, workspaceId), sql`(lower(${permissions.slug}) = lower(${slug}) or lower(${permissions.name}) = lower(${slug}))`))
    .get()?.id;
}

function exactSlugs(db: Db, workspaceId: string, slugs: readonly string[]): Map<string, string> {
  const existing = db.select({ id: permissions.id, slug: permissions.slug }).from(permissions)
    .where(and(eq(permissions.workspaceId, workspaceId), inArray(permissions.slug, [...slugs]))).all();
  return new Map(existing.map((p) => [p.slug, p.id]));
}

/** The slugs (unique, in order) for which ensurePermissions would create a new permission. */
export function missingPermissionSlugs(db: Db, workspaceId: string, slugs: readonly string[]): string[] {
  const unique = [...new Set(slugs)];
  if (unique.length === 0) return [];
  const bySlug = exactSlugs(db, workspaceId, unique);
  return unique.filter((slug) => !bySlug.has(slug) && findBySlugOrName(db, workspaceId, slug) === undefined);
}

/** Ids of the permissions with these slugs, creating the missing ones. Order follows `slugs`. */
export function ensurePermissions(db: Db, workspaceId: string, slugs: readonly string[], nowMs: number): string[] {
  const unique = [...new Set(slugs)];
  if (unique.length === 0) return [];
  const bySlug = exactSlugs(db, workspaceId, unique);
  for (const slug of unique) {
    if (bySlug.has(slug)) continue;
    // A name differing only in case from an existing permission would break the unique index: reuse it.
    // Looked up per slug so that two input slugs differing only in case share the one just created.
    const sameName = findBySlugOrName(db, workspaceId, slug);
    if (sameName) {
      bySlug.set(slug, sameName);
      continue;
    }
    const id = newId("perm");
    db.insert(permissions).values({ id, workspaceId, name: slug, slug, description: `Auto-created permission: ${slug}`, createdAt: nowMs }).run();
    bySlug.set(slug, id);
  }
  return unique.map((s) => bySlug.get(s) as string);
}
