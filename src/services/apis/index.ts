/**
 * APIs: containers of keys. Each API owns one key space; deleting an API is a soft delete after
 * which its keys verify as NOT_FOUND. An API of another workspace behaves as missing.
 */
import { step, then, type Maybe, type Work } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { AppError } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import type { KeyCacheInvalidator } from "../key-cache/index.ts";
import type { ApiRecord, RecordBackend, Records } from "../../storage/records/index.ts";
import { writeAudit } from "../audit/index.ts";
import { listApis, type ApiPage, type ListApisInput } from "./list.ts";
import { DEFAULT_PAGE_BYTES } from "../pages/index.ts";

export type { ApiRecord } from "../../storage/records/index.ts";

/** The detail of a missing API, as upstream's apis routes word it; a route that words it otherwise passes its own. */
export const API_MISSING = "The requested API does not exist or has been deleted.";

/** The live API with this id in the workspace; 404 `api_not_found` (with `missingDetail`) when there is none. */
export function* liveApi(records: Records, workspaceId: string, apiId: string, missingDetail = API_MISSING): Work<ApiRecord> {
  const api = yield* step(records.apis.findLive(workspaceId, apiId));
  if (!api) throw new AppError("api_not_found", { detail: missingDetail });
  return api;
}

export class ApiService {
  /** pageBytes: bytes of items one list page may hold (TOLLGATE_LIST_PAGE_BYTES); 4 MiB when left out. */
  constructor(private readonly deps: { records: RecordBackend; clock: Clock; cache: KeyCacheInvalidator; pageBytes?: number }) {}

  /** Creates an API and its key space. Needs `api.*.create_api`. */
  createApi(principal: Principal, input: { name: string }): Maybe<{ apiId: string }> {
    requirePermission(principal, "api", "*", "create_api");
    const now = this.deps.clock.now();
    const workspaceId = principal.workspaceId;
    return this.deps.records.write(workspaceId, function* (r) {
      const keySpaceId = newId("ks");
      const apiId = newId("api");
      yield r.apis.create({ id: apiId, keySpaceId, workspaceId, name: input.name, createdAt: now });
      yield writeAudit(r, {
        workspaceId, event: "api.create", actor: principal.actor, timeMs: now,
        resources: [{ type: "api", id: apiId, name: input.name }, { type: "keySpace", id: keySpaceId }],
        description: `Created API ${input.name}`,
      });
      return { apiId };
    });
  }

  /** Needs `read_api` on the API (checked before the lookup, so a 403 leaks nothing). */
  getApi(principal: Principal, input: { apiId: string }): Maybe<{ id: string; name: string }> {
    requirePermission(principal, "api", input.apiId, "read_api");
    const api = this.deps.records.read((r) => liveApi(r, principal.workspaceId, input.apiId));
    return then(api, ({ id, name }) => ({ id, name }));
  }

  /** apis.listApis: the live APIs the key may read, paged by id (see list.ts). */
  listApis(principal: Principal, input: ListApisInput): Maybe<ApiPage> {
    return this.deps.records.read((r) => listApis(r, principal, input, this.deps.pageBytes ?? DEFAULT_PAGE_BYTES));
  }

  /** Soft-deletes an API and its keys; 412 when it has delete protection. Needs `delete_api` on the API. */
  deleteApi(principal: Principal, input: { apiId: string }): Maybe<Record<string, never>> {
    requirePermission(principal, "api", input.apiId, "delete_api");
    const now = this.deps.clock.now();
    const workspaceId = principal.workspaceId;
    const deleted = this.deps.records.write(workspaceId, function* (r) {
      yield r.locks.hold({ workspaceId, kind: "api", id: input.apiId });
      const api = yield* liveApi(r, workspaceId, input.apiId);
      if (api.deleteProtection) {
        throw new AppError("protected_resource", { detail: "This API has delete protection enabled. Disable it before attempting to delete." });
      }
      yield r.apis.markDeleted(api.id, now);
      // Its keys go with it, as upstream's: none can be found again, and they stop counting against the quotas.
      yield r.keys.markDeletedInKeySpace(api.keySpaceId, now);
      yield writeAudit(r, {
        workspaceId, event: "api.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "api", id: api.id, name: api.name }], description: `Deleted API ${api.name}`,
      });
    });
    return then(deleted, () => {
      this.deps.cache.workspaceChanged(workspaceId);
      return {};
    });
  }
}
