/**
 * APIs: containers of keys. Each API owns one key space; deleting an API is a soft delete after
 * which its keys verify as NOT_FOUND. An API of another workspace behaves as missing.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Db, Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";
import { apis, keySpaces } from "../../storage/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { AppError } from "../../errors/app-error.ts";
import { recordAudit } from "../audit/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import type { KeyCacheInvalidator } from "../key-cache/index.ts";
import { listApis, type ApiPage, type ListApisInput } from "./list.ts";

export interface ApiRecord {
  id: string;
  name: string;
  keySpaceId: string;
  deleteProtection: boolean;
}

/** The live API with this id in the workspace, or undefined. */
export function findLiveApi(db: Db, workspaceId: string, apiId: string): ApiRecord | undefined {
  return db.select({ id: apis.id, name: apis.name, keySpaceId: apis.keySpaceId, deleteProtection: apis.deleteProtection })
    .from(apis).where(and(eq(apis.id, apiId), eq(apis.workspaceId, workspaceId), isNull(apis.deletedAt))).get();
}

/** The live API that owns a key space, or undefined. */
export function findApiByKeySpace(db: Db, workspaceId: string, keySpaceId: string): ApiRecord | undefined {
  return db.select({ id: apis.id, name: apis.name, keySpaceId: apis.keySpaceId, deleteProtection: apis.deleteProtection })
    .from(apis).where(and(eq(apis.keySpaceId, keySpaceId), eq(apis.workspaceId, workspaceId), isNull(apis.deletedAt))).get();
}

/** Like findLiveApi, but a missing API is 404 `api_not_found`. */
export function getLiveApi(db: Db, workspaceId: string, apiId: string): ApiRecord {
  const api = findLiveApi(db, workspaceId, apiId);
  if (!api) throw new AppError("api_not_found", { detail: "The requested API does not exist or has been deleted." });
  return api;
}

export class ApiService {
  constructor(private readonly deps: { storage: Storage; clock: Clock; cache: KeyCacheInvalidator }) {}

  /** Creates an API and its key space. Needs `api.*.create_api`. */
  createApi(principal: Principal, input: { name: string }): { apiId: string } {
    requirePermission(principal, "api", "*", "create_api");
    const now = this.deps.clock.now();
    const { db } = this.deps.storage;
    return inTransaction(this.deps.storage, () => {
      const keySpaceId = newId("ks");
      const apiId = newId("api");
      db.insert(keySpaces).values({ id: keySpaceId, workspaceId: principal.workspaceId, createdAt: now }).run();
      db.insert(apis).values({ id: apiId, workspaceId: principal.workspaceId, keySpaceId, name: input.name, createdAt: now }).run();
      recordAudit(db, {
        workspaceId: principal.workspaceId, event: "api.create", actor: principal.actor, timeMs: now,
        resources: [{ type: "api", id: apiId, name: input.name }, { type: "keySpace", id: keySpaceId }],
        description: `Created API ${input.name}`,
      });
      return { apiId };
    });
  }

  /** Needs `read_api` on the API (checked before the lookup, so a 403 leaks nothing). */
  getApi(principal: Principal, input: { apiId: string }): { id: string; name: string } {
    requirePermission(principal, "api", input.apiId, "read_api");
    const api = getLiveApi(this.deps.storage.db, principal.workspaceId, input.apiId);
    return { id: api.id, name: api.name };
  }

  /** apis.listApis: the live APIs the key may read, paged by id (see list.ts). */
  listApis(principal: Principal, input: ListApisInput): ApiPage {
    return listApis(this.deps.storage.db, principal, input);
  }

  /** Soft-deletes an API; 412 when it has delete protection. Needs `delete_api` on the API. */
  deleteApi(principal: Principal, input: { apiId: string }): Record<string, never> {
    requirePermission(principal, "api", input.apiId, "delete_api");
    const now = this.deps.clock.now();
    const { db } = this.deps.storage;
    inTransaction(this.deps.storage, () => {
      const api = getLiveApi(db, principal.workspaceId, input.apiId);
      if (api.deleteProtection) {
        throw new AppError("protected_resource", { detail: "This API has delete protection enabled. Disable it before attempting to delete." });
      }
      db.update(apis).set({ deletedAt: now, updatedAt: now }).where(eq(apis.id, api.id)).run();
      recordAudit(db, {
        workspaceId: principal.workspaceId, event: "api.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "api", id: api.id, name: api.name }], description: `Deleted API ${api.name}`,
      });
    });
    this.deps.cache.workspaceChanged(principal.workspaceId);
    return {};
  }
}
