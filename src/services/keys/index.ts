/**
 * End-user keys: creation, reading, listing, and management (update, credits, permissions and roles,
 * reroll, delete). A key string is shown once, at creation; only base64(SHA-256) and `start` are
 * stored, plus an AES-GCM ciphertext for recoverable keys. A key of another workspace, or of a
 * deleted API, behaves as missing. Every change drops the key from the verification cache before
 * it answers, and writes one audit entry in its transaction.
 */
import { and, asc, eq, gte, isNull } from "drizzle-orm";
import { keys } from "../../storage/schema/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { getLiveApi } from "../apis/index.ts";
import { findIdentityByExternalId } from "../identities/index.ts";
import { createKey, type KeyDeps } from "./create.ts";
import { findKeyTarget } from "./target.ts";
import { buildKeyView, type KeyRow } from "./view.ts";
import type { CreateKeyInput, KeyView } from "./types.ts";
import { whoami } from "./whoami.ts";
import { updateKey, type UpdateKeyInput } from "./update.ts";
import { deleteKey, type DeleteKeyInput } from "./delete.ts";
import { updateCredits, type CreditsView, type UpdateCreditsInput } from "./credits.ts";
import { addPermissions, addRoles, removePermissions, removeRoles, setPermissions, setRoles, type KeyPermissionsInput, type KeyRolesInput } from "./access.ts";
import { rerollKey, type RerollKeyInput } from "./reroll.ts";
import type { PermissionView, RoleView } from "../rbac/index.ts";

export type { CreateKeyInput, KeyView } from "./types.ts";
export { Vault } from "./vault.ts";
export { refillDueKeys, lastRefillDueMs } from "./refill.ts";
export type { KeyDeps } from "./create.ts";
export type { UpdateKeyInput } from "./update.ts";
export type { DeleteKeyInput } from "./delete.ts";
export type { CreditsView, UpdateCreditsInput, UpdateKeyCreditsInput } from "./credits.ts";
export type { KeyPermissionsInput, KeyRolesInput } from "./access.ts";
export type { RerollKeyInput } from "./reroll.ts";

export interface Page<T> {
  items: T[];
  /** Id of the first row of the next page; undefined on the last page. */
  cursor: string | undefined;
}

export class KeyService {
  constructor(private readonly deps: KeyDeps) {}

  createKey(principal: Principal, input: CreateKeyInput): { keyId: string; key: string } {
    return createKey(this.deps, principal, input);
  }

  /** One live key by id; needs `read_key` on its API, and `decrypt_key` with `decrypt`. */
  getKey(principal: Principal, input: { keyId: string; decrypt?: boolean }): KeyView {
    const { db } = this.deps.storage;
    const { row, api } = findKeyTarget(db, principal, input.keyId);
    requirePermission(principal, "api", api.id, "read_key");
    if (input.decrypt) requirePermission(principal, "api", api.id, "decrypt_key");
    return this.withPlaintext(buildKeyView(db, row, this.deps.credits), row, input.decrypt);
  }

  /** A key by its plaintext; needs `read_key` on its API. */
  whoami(principal: Principal, input: { key: string }): KeyView {
    return whoami(this.deps.storage.db, this.deps.credits, principal, input);
  }

  updateKey(principal: Principal, input: UpdateKeyInput): Record<string, never> {
    return updateKey(this.deps, principal, input);
  }

  deleteKey(principal: Principal, input: DeleteKeyInput): Record<string, never> {
    return deleteKey(this.deps, principal, input);
  }

  updateCredits(principal: Principal, input: UpdateCreditsInput): CreditsView {
    return updateCredits(this.deps, principal, input);
  }

  addPermissions(principal: Principal, input: KeyPermissionsInput): PermissionView[] {
    return addPermissions(this.deps, principal, input);
  }

  removePermissions(principal: Principal, input: KeyPermissionsInput): PermissionView[] {
    return removePermissions(this.deps, principal, input);
  }

  setPermissions(principal: Principal, input: KeyPermissionsInput): PermissionView[] {
    return setPermissions(this.deps, principal, input);
  }

  addRoles(principal: Principal, input: KeyRolesInput): RoleView[] {
    return addRoles(this.deps, principal, input);
  }

  removeRoles(principal: Principal, input: KeyRolesInput): RoleView[] {
    return removeRoles(this.deps, principal, input);
  }

  setRoles(principal: Principal, input: KeyRolesInput): RoleView[] {
    return setRoles(this.deps, principal, input);
  }

  rerollKey(principal: Principal, input: RerollKeyInput): { keyId: string; key: string } {
    return rerollKey(this.deps, principal, input);
  }

  /** A page of an API's live keys, by id ascending; needs `read_key` and `read_api` on the API. */
  listKeys(principal: Principal, input: { apiId: string; limit?: number; cursor?: string; externalId?: string; decrypt?: boolean }): Page<KeyView> {
    requirePermission(principal, "api", input.apiId, "read_key");
    requirePermission(principal, "api", input.apiId, "read_api");
    if (input.decrypt) requirePermission(principal, "api", input.apiId, "decrypt_key");
    const { db } = this.deps.storage;
    const api = getLiveApi(db, principal.workspaceId, input.apiId);
    const limit = input.limit ?? 100;
    const conditions = [eq(keys.keySpaceId, api.keySpaceId), isNull(keys.deletedAt)];
    if (input.cursor) conditions.push(gte(keys.id, input.cursor));
    if (input.externalId !== undefined) {
      const identity = findIdentityByExternalId(db, principal.workspaceId, input.externalId);
      if (!identity) return { items: [], cursor: undefined };
      conditions.push(eq(keys.identityId, identity.id));
    }
    const rows = db.select().from(keys).where(and(...conditions)).orderBy(asc(keys.id)).limit(limit + 1).all();
    const next = rows.length > limit ? rows[limit] : undefined;
    return { items: rows.slice(0, limit).map((r) => this.withPlaintext(buildKeyView(db, r, this.deps.credits), r, input.decrypt)), cursor: next?.id };
  }

  /** Adds `plaintext` for a recoverable key when asked; a ciphertext that does not decrypt is left out. */
  private withPlaintext(view: KeyView, row: KeyRow, decrypt: boolean | undefined): KeyView {
    if (!decrypt || row.encrypted === null) return view;
    try {
      return { ...view, plaintext: this.deps.vault.decrypt(row.workspaceId, row.encrypted) };
    } catch {
      return view;
    }
  }
}
