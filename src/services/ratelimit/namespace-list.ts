/**
 * ratelimit.listNamespaces (a tollgate addition, for the console): a workspace's live namespaces by
 * id, paged. A key without `ratelimit.*.read_override` sees only the namespaces it holds
 * `ratelimit.<id>.read_override` for, so a key scoped to one namespace can still find it; a key that
 * may read no namespace's overrides gets the 403. Reads the records, not the namespace cache, which
 * holds only the namespaces in use.
 */
import { step, type Work } from "../../storage/work.ts";
import type { Records } from "../../storage/records/index.ts";
import { permittedIds, type Principal } from "../auth/index.ts";
import { fitPage, jsonBytes } from "../pages/index.ts";

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
export function* listNamespaces(records: Records, principal: Principal, input: ListNamespacesInput, budgetBytes: number): Work<NamespacePage> {
  const ids = permittedIds(principal, "ratelimit", "read_override");
  const search = input.search?.trim() ?? "";
  const limit = input.limit ?? DEFAULT_NAMESPACE_PAGE;
  const rows = yield* step(records.namespaces.list({
    workspaceId: principal.workspaceId,
    ids,
    ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
    ...(search !== "" ? { search } : {}),
    limit: limit + 1,
  }));
  return fitPage(rows.slice(0, limit), (row) => row.id, jsonBytes, budgetBytes, rows[limit]?.id);
}
