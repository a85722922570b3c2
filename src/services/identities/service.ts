/** identities.*: create, read, list, update and soft-delete identities and their shared limits. */
import { eq } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";
import { identities } from "../../storage/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { AppError, invalidInput } from "../../errors/app-error.ts";
import { recordAudit } from "../audit/index.ts";
import { assertMetaSize } from "../meta/index.ts";
import { can, requirePermission, type Principal } from "../auth/index.ts";
import type { KeyCacheInvalidator } from "../key-cache/index.ts";
import {
  findLiveIdentity, listLiveIdentities, loadIdentityRatelimits, replaceRatelimits,
  type IdentitySummary, type RatelimitConfig, type RatelimitInput,
} from "./records.ts";

/** An identity as the API returns it: `meta` as stored (`{}` when none), limits by name. */
export interface IdentityView {
  id: string;
  externalId: string;
  meta: Record<string, unknown>;
  ratelimits: RatelimitConfig[];
}

export interface CreateIdentityInput {
  externalId: string;
  meta?: Record<string, unknown>;
  ratelimits?: RatelimitInput[];
}

export interface UpdateIdentityInput {
  identity: string;
  meta?: Record<string, unknown>;
  ratelimits?: RatelimitInput[];
}

export interface IdentityPage {
  items: IdentityView[];
  /** Id of the first row of the next page; undefined on the last page. */
  cursor: string | undefined;
}

export interface IdentityDeps {
  storage: Storage;
  clock: Clock;
  cache: KeyCacheInvalidator;
}

/** Throws 400 when two limits of the request share a name. */
function assertUniqueNames(limits: readonly RatelimitInput[] | undefined): void {
  const seen = new Set<string>();
  for (const l of limits ?? []) {
    if (seen.has(l.name)) throw invalidInput("body.ratelimits", `Ratelimit with name '${l.name}' is already defined in the request`);
    seen.add(l.name);
  }
}

/** Whether `error` (or its cause) is SQLite refusing a second live identity with one externalId. */
function isDuplicateExternalId(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e.message.includes("UNIQUE constraint failed: identities.workspace_id, identities.external_id")) return true;
  }
  return false;
}

function identityNotFound(): AppError {
  return new AppError("identity_not_found", { detail: "This identity does not exist." });
}

function toView(identity: IdentitySummary, ratelimits: RatelimitConfig[]): IdentityView {
  return { id: identity.id, externalId: identity.externalId, meta: identity.meta ?? {}, ratelimits };
}

export class IdentityService {
  constructor(private readonly deps: IdentityDeps) {}

  /** Creates an identity with its limits. Needs `identity.*.create_identity`; a live duplicate externalId is 409. */
  createIdentity(principal: Principal, input: CreateIdentityInput): { identityId: string } {
    requirePermission(principal, "identity", "*", "create_identity");
    assertMetaSize(input.meta);
    assertUniqueNames(input.ratelimits);
    const { db } = this.deps.storage;
    const ws = principal.workspaceId;
    const now = this.deps.clock.now();
    return inTransaction(this.deps.storage, () => {
      const identityId = newId("id");
      try {
        db.insert(identities).values({ id: identityId, workspaceId: ws, externalId: input.externalId, meta: input.meta ?? {}, createdAt: now }).run();
      } catch (error) {
        if (!isDuplicateExternalId(error)) throw error;
        throw new AppError("identity_already_exists", { detail: `Identity with externalId '${input.externalId}' already exists in this workspace.` });
      }
      if (input.ratelimits?.length) replaceRatelimits(db, ws, { identityId }, input.ratelimits, now);
      recordAudit(db, {
        workspaceId: ws, event: "identity.create", actor: principal.actor, timeMs: now,
        resources: [{ type: "identity", id: identityId, name: input.externalId }], description: `Created identity ${identityId}`,
      });
      return { identityId };
    });
  }

  /** One live identity by id or externalId. Needs `identity.*.read_identity` or `identity.<id>.read_identity`. */
  getIdentity(principal: Principal, input: { identity: string }): IdentityView {
    const wildcard = can(principal, "identity", "*", "read_identity");
    const { db } = this.deps.storage;
    const found = findLiveIdentity(db, principal.workspaceId, input.identity);
    // Without the wildcard grant, a missing identity is 403 too, so the answer leaks nothing.
    if (!wildcard && (!found || !can(principal, "identity", found.id, "read_identity"))) {
      requirePermission(principal, "identity", "*", "read_identity");
    }
    if (!found) throw identityNotFound();
    return toView(found, loadIdentityRatelimits(db, [found.id]).get(found.id) ?? []);
  }

  /**
   * A page of live identities by id ascending (limit 1..100, default 100). Without
   * `identity.*.read_identity`, every row of the page needs `identity.<id>.read_identity` (else 403).
   */
  listIdentities(principal: Principal, input: { limit?: number; cursor?: string; search?: string }): IdentityPage {
    const { db } = this.deps.storage;
    const limit = input.limit ?? 100;
    const rows = listLiveIdentities(db, principal.workspaceId, { ...input, limit: limit + 1 });
    const page = rows.slice(0, limit);
    if (!can(principal, "identity", "*", "read_identity")) {
      if (page.length === 0 || page.some((r) => !can(principal, "identity", r.id, "read_identity"))) {
        requirePermission(principal, "identity", "*", "read_identity");
      }
    }
    const limits = loadIdentityRatelimits(db, page.map((r) => r.id));
    return { items: page.map((r) => toView(r, limits.get(r.id) ?? [])), cursor: rows[limit]?.id };
  }

  /**
   * Replaces `meta` (`{}` clears) and/or the whole set of limits (by name; `[]` clears) and returns
   * the identity as stored. Needs `identity.*.update_identity`.
   */
  updateIdentity(principal: Principal, input: UpdateIdentityInput): IdentityView {
    requirePermission(principal, "identity", "*", "update_identity");
    assertMetaSize(input.meta);
    assertUniqueNames(input.ratelimits);
    const { db } = this.deps.storage;
    const now = this.deps.clock.now();
    const view = inTransaction(this.deps.storage, () => {
      const found = findLiveIdentity(db, principal.workspaceId, input.identity);
      if (!found) throw identityNotFound();
      const meta = input.meta ?? found.meta;
      db.update(identities).set({ updatedAt: now, ...(input.meta !== undefined ? { meta: input.meta } : {}) }).where(eq(identities.id, found.id)).run();
      if (input.ratelimits !== undefined) replaceRatelimits(db, principal.workspaceId, { identityId: found.id }, input.ratelimits, now);
      recordAudit(db, {
        workspaceId: principal.workspaceId, event: "identity.update", actor: principal.actor, timeMs: now,
        resources: [{ type: "identity", id: found.id, name: found.externalId }], description: `Updated identity ${found.id}`,
      });
      return toView({ ...found, meta }, loadIdentityRatelimits(db, [found.id]).get(found.id) ?? []);
    });
    this.deps.cache.workspaceChanged(principal.workspaceId);
    return view;
  }

  /**
   * Soft-deletes an identity: its externalId is free again at once; its keys keep working, without
   * the identity. Needs `identity.*.delete_identity`.
   */
  deleteIdentity(principal: Principal, input: { identity: string }): Record<string, never> {
    requirePermission(principal, "identity", "*", "delete_identity");
    const { db } = this.deps.storage;
    const now = this.deps.clock.now();
    inTransaction(this.deps.storage, () => {
      const found = findLiveIdentity(db, principal.workspaceId, input.identity);
      if (!found) throw identityNotFound();
      // The externalId index covers live rows only, so older deleted rows with this externalId never collide.
      db.update(identities).set({ deletedAt: now, updatedAt: now }).where(eq(identities.id, found.id)).run();
      recordAudit(db, {
        workspaceId: principal.workspaceId, event: "identity.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "identity", id: found.id, name: found.externalId }], description: `Deleted identity ${found.id}`,
      });
    });
    this.deps.cache.workspaceChanged(principal.workspaceId);
    return {};
  }
}
