/**
 * ratelimit.listNamespaces (a tollgate addition, for the console): a workspace's live namespaces by
 * id, paged. A key without `ratelimit.*.read_override` sees only the namespaces it holds
 * `ratelimit.<id>.read_override` for, so a key scoped to one namespace can still find it; a key that
 * may read no namespace's overrides gets the 403. Reads SQLite, not the namespace cache, which holds
 * only the namespaces in use.
 */
import { and, asc, eq, gte, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { ratelimitNamespaces } from "../../storage/schema/index.ts";
import { likeContains } from "../../lib/like.ts";
import { permittedIds, type Principal } from "../auth/index.ts";

export interface NamespacePage {
  /** createdAt: Unix ms. */
  items: Array<{ id: string; name: string; createdAt: number }>;
  /** The next page's first id; undefined on the last page. */
  cursor: string | undefined;
}

export interface ListNamespacesInput {
  limit?: number;
  cursor?: string;
  search?: string;
}

const DEFAULT_NAMESPACE_PAGE = 100;

/** Up to `limit` (default 100) live namespaces by id from `cursor` (inclusive) whose id or name contains `search`, case-insensitively. */
export function listNamespaces(db: Db, principal: Principal, input: ListNamespacesInput): NamespacePage {
  const ns = ratelimitNamespaces;
  const conditions: SQL[] = [eq(ns.workspaceId, principal.workspaceId), isNull(ns.deletedAt)];
  const ids = permittedIds(principal, "ratelimit", "read_override");
  if (ids !== null) conditions.push(inArray(ns.id, ids));
  if (input.cursor !== undefined) conditions.push(gte(ns.id, input.cursor));
  const search = input.search?.trim() ?? "";
  if (search !== "") {
    const pattern = likeContains(search);
    const matches = or(sql`${ns.id} LIKE ${pattern} ESCAPE '\\'`, sql`${ns.name} LIKE ${pattern} ESCAPE '\\'`);
    if (matches) conditions.push(matches);
  }
  const limit = input.limit ?? DEFAULT_NAMESPACE_PAGE;
  const rows = db.select({ id: ns.id, name: ns.name, createdAt: ns.createdAt }).from(ns)
    .where(and(...conditions)).orderBy(asc(ns.id)).limit(limit + 1).all();
  return { items: rows.slice(0, limit), cursor: rows[limit]?.id };
}
