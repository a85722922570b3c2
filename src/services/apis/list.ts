/**
 * apis.listApis (a tollgate addition, for the console): a workspace's live APIs by id, paged. A key
 * without `api.*.read_api` sees only the APIs it holds `api.<id>.read_api` for, so a key scoped to
 * one API can still find it; a key that may read no API at all gets the 403.
 */
import { step, type Work } from "../../storage/work.ts";
import { permittedIds, type Principal } from "../auth/index.ts";
import type { Records } from "../../storage/records/index.ts";
import { fitPage, jsonBytes } from "../pages/index.ts";

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
export function* listApis(records: Records, principal: Principal, input: ListApisInput, budgetBytes: number): Work<ApiPage> {
  const limit = input.limit ?? 100;
  const search = input.search?.trim() ?? "";
  const rows = yield* step(records.apis.list({
    workspaceId: principal.workspaceId,
    ids: permittedIds(principal, "api", "read_api"),
    ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
    ...(search !== "" ? { search } : {}),
    limit: limit + 1,
  }));
  return fitPage(rows.slice(0, limit), (row) => row.id, jsonBytes, budgetBytes, rows[limit]?.id);
}
