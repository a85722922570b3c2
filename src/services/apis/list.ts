/**
 * apis.listApis (a tollgate addition, for the console): a workspace's live APIs by id, paged. A key
 * without `api.*.read_api` sees only the APIs it holds `api.<id>.read_api` for, so a key scoped to
 * one API can still find it; a key that may read no API at all gets the 403.
 */
import { and, asc, eq, gte, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../storage/db.ts";
import { apis } from "../../storage/schema/index.ts";
import { likeContains } from "../../lib/like.ts";
import { permittedIds, type Principal } from "../auth/index.ts";

export interface ApiPage {
  /** keySpaceId: what the analytics tables' `key_space_id` holds for the API's keys. */
  items: Array<{ id: string; name: string; keySpaceId: string }>;
  /** The next page's first id; undefined on the last page. */
  cursor: string | undefined;
}

export interface ListApisInput {
  limit?: number;
  cursor?: string;
  search?: string;
}

/** Up to `limit` (default 100) live APIs by id from `cursor` (inclusive) whose id or name contains `search`, case-insensitively. */
export function listApis(db: Db, principal: Principal, input: ListApisInput): ApiPage {
  const conditions: SQL[] = [eq(apis.workspaceId, principal.workspaceId), isNull(apis.deletedAt)];
  const ids = permittedIds(principal, "api", "read_api");
  if (ids !== null) conditions.push(inArray(apis.id, ids));
  if (input.cursor !== undefined) conditions.push(gte(apis.id, input.cursor));
  const search = input.search?.trim() ?? "";
  if (search !== "") {
    const pattern = likeContains(search);
    const matches = or(sql`${apis.id} LIKE ${pattern} ESCAPE '\\'`, sql`${apis.name} LIKE ${pattern} ESCAPE '\\'`);
    if (matches) conditions.push(matches);
  }
  const limit = input.limit ?? 100;
  const rows = db.select({ id: apis.id, name: apis.name, keySpaceId: apis.keySpaceId }).from(apis).where(and(...conditions)).orderBy(asc(apis.id)).limit(limit + 1).all();
  return { items: rows.slice(0, limit), cursor: rows[limit]?.id };
}
