/** identities.*: create, read, list, update and soft-delete identities and their shared limits. */
import { DuplicateRecord, type RecordBackend, type Records } from "../../storage/records/index.ts";
import { step, then, type Maybe, type Work } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId } from "../../lib/ids.ts";
import { AppError, invalidInput } from "../../errors/app-error.ts";
import { writeAudit } from "../audit/index.ts";
import { withinQuotas, type WorkspaceQuotas } from "../quotas/index.ts";
import { assertMetaSize } from "../meta/index.ts";
import { markHoldsRawJson, RawJson } from "../../lib/raw-json.ts";
import { DEFAULT_PAGE_BYTES, fitPage, jsonBytes, planPage } from "../pages/index.ts";
import { can, missingPermissions, requirePermission, type Principal } from "../auth/index.ts";
import type { KeyCacheInvalidator } from "../key-cache/index.ts";
import { findLiveIdentityIn, replaceRatelimitsIn, type IdentitySummary, type RatelimitConfig, type RatelimitInput } from "./records.ts";

/** An identity as the API returns it: `meta` as stored (`{}` when none; a list page's as its stored text), limits by name. */
export interface IdentityView {
  id: string;
  externalId: string;
  meta: Record<string, unknown> | RawJson;
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
  records: RecordBackend;
  /** Bytes of items one list page may hold (TOLLGATE_LIST_PAGE_BYTES); 4 MiB when left out. */
  pageBytes?: number;
  clock: Clock;
  cache: KeyCacheInvalidator;
  /** What a workspace may hold; DEFAULT_QUOTAS when left out. */
  quotas?: WorkspaceQuotas;
}

/** Throws 400 when two limits of the request share a name. */
function assertUniqueNames(limits: readonly RatelimitInput[] | undefined): void {
  const seen = new Set<string>();
  for (const l of limits ?? []) {
    if (seen.has(l.name)) throw invalidInput("body.ratelimits", `Ratelimit with name '${l.name}' is already defined in the request`);
    seen.add(l.name);
  }
}

function identityNotFound(): AppError {
  return new AppError("identity_not_found", { detail: "This identity does not exist." });
}

/** A listed meta as its stored text; `{}` when none. */
function rawMeta(text: string | null): Record<string, unknown> | RawJson {
  return text === null ? {} : new RawJson(text);
}

function toView(identity: IdentitySummary, ratelimits: RatelimitConfig[]): IdentityView {
  return { id: identity.id, externalId: identity.externalId, meta: identity.meta ?? {}, ratelimits };
}

/** The identity with its limits, as the API returns it. */
function* viewOf(records: Records, identity: IdentitySummary): Work<IdentityView> {
  const limits = yield* step(records.limits.loadForIdentities([identity.id]));
  return toView(identity, limits.get(identity.id) ?? []);
}

/**
 * The live identity `ref` (id or externalId) of the workspace, 404 when there is none, locked for
 * the rest of the unit: found, locked by id, and read again, since a unit that held the lock
 * before may have changed or deleted it.
 */
function* liveIdentity(records: Records, workspaceId: string, ref: string): Work<IdentitySummary> {
  const found = yield* findLiveIdentityIn(records, workspaceId, ref);
  if (!found) throw identityNotFound();
  yield records.locks.hold({ workspaceId, kind: "identity", id: found.id });
  const locked = yield* step(records.identities.findInWorkspace(workspaceId, found.id));
  if (!locked) throw identityNotFound();
  return locked;
}

export class IdentityService {
  constructor(private readonly deps: IdentityDeps) {}

  /** Creates an identity with its limits. Needs `identity.*.create_identity`; a live duplicate externalId is 409. */
  createIdentity(principal: Principal, input: CreateIdentityInput): Maybe<{ identityId: string }> {
    requirePermission(principal, "identity", "*", "create_identity");
    assertMetaSize(input.meta);
    assertUniqueNames(input.ratelimits);
    const ws = principal.workspaceId;
    const now = this.deps.clock.now();
    return this.deps.records.write(ws, withinQuotas(this.deps.quotas, ws, function* (r) {
      const identityId = newId("id");
      try {
        yield r.identities.insert({ id: identityId, workspaceId: ws, externalId: input.externalId, meta: input.meta ?? {}, createdAt: now });
      } catch (error) {
        if (!(error instanceof DuplicateRecord)) throw error;
        throw new AppError("identity_already_exists", { detail: `Identity with externalId '${input.externalId}' already exists in this workspace.` });
      }
      if (input.ratelimits?.length) yield* replaceRatelimitsIn(r, ws, { identityId }, input.ratelimits, now);
      yield writeAudit(r, {
        workspaceId: ws, event: "identity.create", actor: principal.actor, timeMs: now,
        resources: [{ type: "identity", id: identityId, name: input.externalId }], description: `Created identity ${identityId}`,
      });
      return { identityId };
    }));
  }

  /** One live identity by id or externalId. Needs `identity.*.read_identity` or `identity.<id>.read_identity`. */
  getIdentity(principal: Principal, input: { identity: string }): Maybe<IdentityView> {
    const wildcard = can(principal, "identity", "*", "read_identity");
    return this.deps.records.read(function* (r) {
      const found = yield* findLiveIdentityIn(r, principal.workspaceId, input.identity);
      // Without the wildcard grant, a missing identity is 403 too, naming the identity as asked for
      // (not the id found), so the answer leaks nothing.
      if (!wildcard && (!found || !can(principal, "identity", found.id, "read_identity"))) {
        throw missingPermissions(principal, ["identity.*.read_identity", `identity.${input.identity}.read_identity`]);
      }
      if (!found) throw identityNotFound();
      return yield* viewOf(r, found);
    });
  }

  /**
   * A page of live identities by id ascending (limit 1..100, default 100), ended early at the page
   * byte budget (services/pages). Without `identity.*.read_identity`, every row of the page needs
   * `identity.<id>.read_identity` (else 403).
   */
  listIdentities(principal: Principal, input: { limit?: number; cursor?: string; search?: string }): Maybe<IdentityPage> {
    const limit = input.limit ?? 100;
    const search = input.search?.trim() ?? "";
    const budget = this.deps.pageBytes ?? DEFAULT_PAGE_BYTES;
    return this.deps.records.read(function* (r) {
      const query = {
        workspaceId: principal.workspaceId, ...(input.cursor !== undefined ? { cursor: input.cursor } : {}), ...(search !== "" ? { search } : {}),
      };
      const plan = planPage(yield* step(r.identities.listSizes({ ...query, limit: limit + 1 })), limit, budget);
      const rows = plan.until === undefined ? [] : yield* step(r.identities.list({ ...query, until: plan.until, limit }));
      if (!can(principal, "identity", "*", "read_identity")) {
        // The rows it may not read are not named: it learns no identity id it may not see.
        if (rows.some((row) => !can(principal, "identity", row.id, "read_identity"))) {
          throw missingPermissions(principal, ["identity.*.read_identity", "identity.<identityId>.read_identity"]);
        }
        if (rows.length === 0) requirePermission(principal, "identity", "*", "read_identity");
      }
      const limits = yield* step(r.limits.loadForIdentities(rows.map((row) => row.id)));
      // The metas go into the answer as their stored text: no parse here, no serialisation in the pipeline.
      const views = rows.map((row) => ({ id: row.id, externalId: row.externalId, meta: rawMeta(row.metaText), ratelimits: limits.get(row.id) ?? [] }));
      const bytesOf = (view: IdentityView) =>
        (plan.storedBytes.get(view.id) ?? jsonBytes(view.meta)) + jsonBytes({ id: view.id, externalId: view.externalId, meta: null, ratelimits: view.ratelimits });
      const page = fitPage(views, (view) => view.id, bytesOf, budget, plan.next);
      return { ...page, items: markHoldsRawJson(page.items) };
    });
  }

  /**
   * Replaces `meta` (`{}` clears) and/or the whole set of limits (by name; `[]` clears) and returns
   * the identity as stored. Needs `identity.*.update_identity`.
   */
  updateIdentity(principal: Principal, input: UpdateIdentityInput): Maybe<IdentityView> {
    requirePermission(principal, "identity", "*", "update_identity");
    assertMetaSize(input.meta);
    assertUniqueNames(input.ratelimits);
    const ws = principal.workspaceId;
    const now = this.deps.clock.now();
    const view = this.deps.records.write(ws, withinQuotas(this.deps.quotas, ws, function* (r) {
      const found = yield* liveIdentity(r, ws, input.identity);
      const meta = input.meta ?? found.meta;
      yield r.identities.update(found.id, { updatedAt: now, ...(input.meta !== undefined ? { meta: input.meta } : {}) });
      if (input.ratelimits !== undefined) yield* replaceRatelimitsIn(r, ws, { identityId: found.id }, input.ratelimits, now);
      yield writeAudit(r, {
        workspaceId: ws, event: "identity.update", actor: principal.actor, timeMs: now,
        resources: [{ type: "identity", id: found.id, name: found.externalId }], description: `Updated identity ${found.id}`,
      });
      return yield* viewOf(r, { ...found, meta });
    }));
    return then(view, (changed) => {
      this.deps.cache.workspaceChanged(ws);
      return changed;
    });
  }

  /**
   * Soft-deletes an identity: its externalId is free again at once; its keys keep working, without
   * the identity. Needs `identity.*.delete_identity`.
   */
  deleteIdentity(principal: Principal, input: { identity: string }): Maybe<Record<string, never>> {
    requirePermission(principal, "identity", "*", "delete_identity");
    const ws = principal.workspaceId;
    const now = this.deps.clock.now();
    const deleted = this.deps.records.write(ws, function* (r) {
      const found = yield* liveIdentity(r, ws, input.identity);
      // The externalId index covers live rows only, so older deleted rows with this externalId never collide.
      yield r.identities.markDeleted(found.id, now);
      yield writeAudit(r, {
        workspaceId: ws, event: "identity.delete", actor: principal.actor, timeMs: now,
        resources: [{ type: "identity", id: found.id, name: found.externalId }], description: `Deleted identity ${found.id}`,
      });
    });
    return then(deleted, () => {
      this.deps.cache.workspaceChanged(ws);
      return {};
    });
  }
}
