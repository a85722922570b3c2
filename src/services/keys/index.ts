/**
 * End-user keys: creation, reading, listing, and management (update, credits, permissions and roles,
 * reroll, delete). A key string is shown once, at creation; only base64(SHA-256) and `start` are
 * stored, plus an AES-GCM ciphertext for recoverable keys. A key of another workspace, or of a
 * deleted API, behaves as missing. Every change drops the key from the verification cache before
 * it answers, and writes one audit entry in its unit of work.
 */
import type { Records } from "../../storage/records/index.ts";
import { step, type Maybe, type Work } from "../../storage/work.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { liveApi } from "../apis/index.ts";
import { createKey, type KeyDeps } from "./create.ts";
import { findKeyTargetIn } from "./target.ts";
import { keyViewIn, type KeyRow } from "./view.ts";
import type { CreateKeyInput, KeyView, ListedKeyView } from "./types.ts";
import { whoamiIn } from "./whoami.ts";
import { updateKey, type UpdateKeyInput } from "./update.ts";
import { deleteKey, type DeleteKeyInput } from "./delete.ts";
import { updateCredits, type CreditsView, type UpdateCreditsInput } from "./credits.ts";
import { addPermissions, addRoles, removePermissions, removeRoles, setPermissions, setRoles, type KeyPermissionsInput, type KeyRolesInput } from "./access.ts";
import { rerollKey, type RerollKeyInput } from "./reroll.ts";
import type { PermissionView, RoleView } from "../rbac/index.ts";
import { markHoldsRawJson, RawJson } from "../../lib/raw-json.ts";
import { DEFAULT_PAGE_BYTES, fitPage, jsonBytes, planPage, type Page } from "../pages/index.ts";

export type { CreateKeyInput, KeyView, ListedKeyView } from "./types.ts";
export { Vault } from "./vault.ts";
export { refillDueKeys, lastRefillDueMs } from "./refill.ts";
export type { KeyDeps } from "./create.ts";
export type { UpdateKeyInput } from "./update.ts";
export type { DeleteKeyInput } from "./delete.ts";
export type { CreditsView, UpdateCreditsInput, UpdateKeyCreditsInput } from "./credits.ts";
export type { KeyPermissionsInput, KeyRolesInput } from "./access.ts";
export type { RerollKeyInput } from "./reroll.ts";

export type { Page } from "../pages/index.ts";

/** A key's bytes in a page: its metas as stored (measured from the view when the plan has no size for it) and the rest. */
function keyViewBytes(view: ListedKeyView, storedBytes: number | undefined): number {
  const { meta, identity, ...rest } = view;
  const identityMeta = identity?.meta;
  const metas = storedBytes ?? jsonBytes(meta ?? null) + jsonBytes(identityMeta ?? null);
  return metas + jsonBytes({ ...rest, ...(identity ? { identity: { ...identity, meta: null } } : {}), meta: null });
}

export class KeyService {
  constructor(private readonly deps: KeyDeps) {}

  createKey(principal: Principal, input: CreateKeyInput): Maybe<{ keyId: string; key: string }> {
    return createKey(this.deps, principal, input);
  }

  /** One live key by id; needs `read_key` on its API, and `decrypt_key` with `decrypt`. */
  getKey(principal: Principal, input: { keyId: string; decrypt?: boolean }): Maybe<KeyView> {
    const self = this;
    return this.deps.records.read(function* (r) {
      const { row, api } = yield* findKeyTargetIn(r, principal, input.keyId);
      requirePermission(principal, "api", api.id, "read_key");
      if (input.decrypt) requirePermission(principal, "api", api.id, "decrypt_key");
      return yield* self.withPlaintextIn(r, yield* keyViewIn(r, row, self.deps.credits), row, input.decrypt);
    });
  }

  /** A key by its plaintext; needs `read_key` on its API. */
  whoami(principal: Principal, input: { key: string }): Maybe<KeyView> {
    return this.deps.records.read((r) => whoamiIn(r, this.deps.credits, principal, input));
  }

  updateKey(principal: Principal, input: UpdateKeyInput): Maybe<Record<string, never>> {
    return updateKey(this.deps, principal, input);
  }

  deleteKey(principal: Principal, input: DeleteKeyInput): Maybe<Record<string, never>> {
    return deleteKey(this.deps, principal, input);
  }

  updateCredits(principal: Principal, input: UpdateCreditsInput): Maybe<CreditsView> {
    return updateCredits(this.deps, principal, input);
  }

  addPermissions(principal: Principal, input: KeyPermissionsInput): Maybe<PermissionView[]> {
    return addPermissions(this.deps, principal, input);
  }

  removePermissions(principal: Principal, input: KeyPermissionsInput): Maybe<PermissionView[]> {
    return removePermissions(this.deps, principal, input);
  }

  setPermissions(principal: Principal, input: KeyPermissionsInput): Maybe<PermissionView[]> {
    return setPermissions(this.deps, principal, input);
  }

  addRoles(principal: Principal, input: KeyRolesInput): Maybe<RoleView[]> {
    return addRoles(this.deps, principal, input);
  }

  removeRoles(principal: Principal, input: KeyRolesInput): Maybe<RoleView[]> {
    return removeRoles(this.deps, principal, input);
  }

  setRoles(principal: Principal, input: KeyRolesInput): Maybe<RoleView[]> {
    return setRoles(this.deps, principal, input);
  }

  rerollKey(principal: Principal, input: RerollKeyInput): Maybe<{ keyId: string; key: string }> {
    return rerollKey(this.deps, principal, input);
  }

  /**
   * A page of an API's live keys, by id ascending, ended early at the page byte budget
   * (services/pages); needs `read_key` and `read_api` on the API.
   */
  listKeys(principal: Principal, input: { apiId: string; limit?: number; cursor?: string; externalId?: string; decrypt?: boolean }): Maybe<Page<ListedKeyView>> {
    requirePermission(principal, "api", input.apiId, "read_key");
    requirePermission(principal, "api", input.apiId, "read_api");
    if (input.decrypt) requirePermission(principal, "api", input.apiId, "decrypt_key");
    const self = this;
    const budget = this.deps.pageBytes ?? DEFAULT_PAGE_BYTES;
    return this.deps.records.read(function* (r): Work<Page<ListedKeyView>> {
      const api = yield* liveApi(r, principal.workspaceId, input.apiId);
      const limit = input.limit ?? 100;
      let identityId: string | undefined;
      if (input.externalId !== undefined) {
        const identity = yield* step(r.identities.findByExternalId(principal.workspaceId, input.externalId));
        if (!identity) return { items: [], cursor: undefined };
        identityId = identity.id;
      }
      const query = { keySpaceId: api.keySpaceId, ...(input.cursor ? { cursor: input.cursor } : {}), ...(identityId !== undefined ? { identityId } : {}) };
      const plan = planPage(yield* step(r.keys.listSizes({ ...query, limit: limit + 1 })), limit, budget);
      const rows = plan.until === undefined ? [] : yield* step(r.keys.list({ ...query, until: plan.until, limit }));
      const items: ListedKeyView[] = [];
      for (const { metaText, ...columns } of rows) {
        const row = { ...columns, meta: null };
        const view = yield* self.withPlaintextIn(r, yield* keyViewIn(r, row, self.deps.credits), row, input.decrypt);
        // The meta goes into the answer as its stored text: no parse here, no serialisation in the pipeline.
        items.push(metaText === null ? view : { ...view, meta: new RawJson(metaText) });
      }
      const page = fitPage(items, (item) => item.keyId, (item) => keyViewBytes(item, plan.storedBytes.get(item.keyId)), budget, plan.next);
      return { ...page, items: markHoldsRawJson(page.items) };
    });
  }

  /** Adds `plaintext` for a recoverable key when asked; a ciphertext that does not decrypt is left out. */
  private *withPlaintextIn(records: Records, view: KeyView, row: KeyRow, decrypt: boolean | undefined): Work<KeyView> {
    if (!decrypt || row.encrypted === null) return view;
    try {
      yield* this.deps.vault.loadIn(records, row.workspaceId);
      return { ...view, plaintext: this.deps.vault.decrypt(row.workspaceId, row.encrypted) };
    } catch {
      return view;
    }
  }
}
