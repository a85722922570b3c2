/**
 * Standalone rate limits (upstream §5.15–§5.17): `limit` / `multiLimit` on (namespace, identifier)
 * and per-identifier overrides. Namespaces are addressed by id or name and created on first use;
 * namespaces and overrides are cached in memory within a bounded number of bytes, so a check on a
 * known namespace reads no records (unless its overrides outgrow their share: override-loader.ts).
 * In the shared limiter a namespace is the scope `${workspaceId}|${namespaceId}` (one string per
 * cached namespace, so its hash is computed once) and the request's identifier is the counter in it.
 *
 * The override routes run as units of work on the records. A check (`limit`, `multiLimit`,
 * checks.ts) answers a Maybe: embedded (given the SQLite file and the in-memory limiter) it stays
 * synchronous all the way, reading the file directly on a cache miss (check-reads.ts); in the
 * cluster its reads, namespace creations and the window store (Redis) answer promises.
 */
import type { Storage } from "../../storage/db.ts";
import type { RecordBackend } from "../../storage/records/index.ts";
import { step, then, thenMaybe, type Maybe } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { AppError } from "../../errors/app-error.ts";
import { writeAudit } from "../audit/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { DEFAULT_PAGE_BYTES, fitPage, jsonBytes } from "../pages/index.ts";
import { withinQuotas, type WorkspaceQuotas } from "../quotas/index.ts";
import { RatelimitChecks, type MultiLimitOutcome } from "./checks.ts";
import { NamespaceCache, type NamespaceCacheCaps, type NamespaceEntry } from "./namespace-cache.ts";
import type { Found, NamespaceOverrides, OverrideRecord } from "./overrides.ts";
import { OverrideLoader } from "./override-loader.ts";
import { RecordCheckReads, SqliteCheckReads } from "./check-reads.ts";
import { CheckNamespaces } from "./check-namespaces.ts";
import { listNamespaces, type ListNamespacesInput, type NamespacePage } from "./namespace-list.ts";
import { findNamespaceIn, upsertOverrideIn } from "./records.ts";
import type { WindowLimiter } from "./window-limiter.ts";
import type { LimitInput, LimitOutcome, OverridePage, OverrideView, RatelimitDecisionRecorder } from "./views.ts";

export interface RatelimitDeps {
  /** Namespaces and overrides, for the override routes and the creation of namespaces; a check's reads without `storage`. */
  records: RecordBackend;
  /**
   * Embedded: the SQLite file a check reads on a cache miss (namespaces, override indexes, exact
   * overrides of a spilled index), synchronously. Left out in the cluster, whose checks read `records`.
   */
  storage?: Storage;
  clock: Clock;
  limiter: WindowLimiter;
  /** Memory of the namespaces (with their overrides) held in memory; default DEFAULT_NAMESPACE_CACHE_CAPS. */
  namespaceCacheCaps?: NamespaceCacheCaps;
  /** What a workspace may hold (namespaces, and the bytes of overrides); DEFAULT_QUOTAS when left out. */
  quotas?: WorkspaceQuotas;
  /** Live wildcard overrides one namespace may hold; default DEFAULT_WILDCARD_OVERRIDES. */
  wildcardOverridesPerNamespace?: number;
  /** None when analytics recording is off. */
  decisions?: RatelimitDecisionRecorder;
  /** Bytes of items one list page may hold (TOLLGATE_LIST_PAGE_BYTES); 4 MiB when left out. */
  pageBytes?: number;
}

export const DEFAULT_OVERRIDE_PAGE = 50;
export const DEFAULT_NAMESPACE_CACHE_CAPS: NamespaceCacheCaps = { totalBytes: 32 * 2 ** 20, workspaceBytes: 8 * 2 ** 20 };
/**
 * Every check on a namespace tries each of its wildcard overrides in turn, so their number is what
 * a check costs at worst. Tiers and domains ("premium_*", "*@example.com") need a handful.
 */
export const DEFAULT_WILDCARD_OVERRIDES = 100;

const namespaceNotFound = () => new AppError("ratelimit_namespace_not_found", { detail: "This namespace does not exist." });
const overrideNotFound = () => new AppError("ratelimit_override_not_found", { detail: "This override does not exist." });

function toView(o: OverrideRecord): OverrideView {
  return { overrideId: o.id, identifier: o.identifier, limit: o.limit, duration: o.duration };
}


export class RatelimitService {
  private readonly cache: NamespaceCache;
  private readonly namespaces: CheckNamespaces;
  private readonly checks: RatelimitChecks;

  constructor(private readonly deps: RatelimitDeps) {
    const caps = deps.namespaceCacheCaps ?? DEFAULT_NAMESPACE_CACHE_CAPS;
    this.cache = new NamespaceCache(caps);
    const reads = deps.storage ? new SqliteCheckReads(deps.storage) : new RecordCheckReads(deps.records);
    this.namespaces = new CheckNamespaces(this.cache, reads, deps.records, new OverrideLoader(reads, caps.workspaceBytes), deps.quotas);
    this.checks = new RatelimitChecks({ namespaces: this.namespaces, limiter: deps.limiter, clock: deps.clock, decisions: deps.decisions });
  }

  /** Cached namespaces and the bytes charged for them (with their overrides); `bytes` of one workspace when named. */
  namespaceCacheStats(workspaceId?: string): { entries: number; bytes: number } {
    return this.cache.stats(workspaceId);
  }

  /** One check; 403 without `limit` (or, for a new namespace, `create_namespace`); 410 for a deleted namespace. */
  limit(principal: Principal, input: LimitInput): Maybe<LimitOutcome> {
    return this.checks.limit(principal, input);
  }

  /** Up to 100 checks at one instant, charged all-or-nothing; results in request order. */
  multiLimit(principal: Principal, inputs: readonly LimitInput[]): Maybe<MultiLimitOutcome> {
    return this.checks.multiLimit(principal, inputs);
  }

  /**
   * Creates or replaces the override for an exact identifier (a pattern may hold `*`); an update
   * keeps its id. A new pattern beyond the namespace's wildcard cap is 412; replacing one is not.
   */
  setOverride(principal: Principal, input: { namespace: string; identifier: string; limit: number; duration: number }): Maybe<{ overrideId: string }> {
    const ws = principal.workspaceId;
    return thenMaybe(this.existingNamespace(ws, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "set_override");
      return thenMaybe(this.namespaces.overridesOf(ns), (index) => this.setOverrideIn(principal, ns, index, input));
    });
  }

  private setOverrideIn(
    principal: Principal, ns: NamespaceEntry, index: NamespaceOverrides, input: { identifier: string; limit: number; duration: number },
  ): Maybe<{ overrideId: string }> {
    const ws = principal.workspaceId;
    const now = this.deps.clock.now();
    const checkWildcardRoom = () => this.checkWildcardRoom(index);
    const record = this.deps.records.write(ws, withinQuotas(this.deps.quotas, ws, function* (r) {
      // One change to an identifier's override at a time: whether it exists decides insert or update.
      yield r.locks.hold({ workspaceId: ws, kind: "override", id: `${ns.id}/${input.identifier}` });
      const existing = yield* step(r.overrides.findLive(ns.id, input.identifier));
      if (!existing && input.identifier.includes("*")) checkWildcardRoom();
      const saved = yield* upsertOverrideIn(r, ws, ns.id, existing, input, now);
      yield writeAudit(r, {
        workspaceId: ws, event: "ratelimit.set_override", actor: principal.actor, timeMs: now,
        resources: [{ type: "ratelimitNamespace", id: ns.id, name: ns.name }, { type: "ratelimitOverride", id: saved.id, name: input.identifier }],
        description: `${existing ? "Updated" : "Created"} override ${saved.id} for '${input.identifier}': ${input.limit} per ${input.duration} ms`,
      });
      return saved;
    }));
    return then(record, (saved) => {
      index.put(saved);
      this.cache.resized(ns);
      return { overrideId: saved.id };
    });
  }

  /** 412 when a new wildcard would pass the namespace's cap; reads the index only, so a unit may call it. */
  private checkWildcardRoom(index: NamespaceOverrides): void {
    const cap = this.deps.wildcardOverridesPerNamespace ?? DEFAULT_WILDCARD_OVERRIDES;
    if (index.wildcardCount < cap) return;
    throw new AppError("precondition_failed", {
      detail: `This namespace has ${cap} wildcard overrides (identifiers with '*'), the most it may have. Delete one, or change an existing one.`,
    });
  }

  /** The override that applies to `identifier` (exact, then wildcard). Needs `read_override` (403). */
  getOverride(principal: Principal, input: { namespace: string; identifier: string }): Maybe<OverrideView> {
    return thenMaybe(this.existingNamespace(principal.workspaceId, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "read_override");
      return thenMaybe(this.namespaces.overridesOf(ns), (index) => then(index.match(input.identifier), (found: Found) => {
        if (!found) throw overrideNotFound();
        return toView(found);
      }));
    });
  }

  /** A page of live overrides by id (limit 1..100, default 50). Needs `read_override`. */
  listOverrides(principal: Principal, input: { namespace: string; limit?: number; cursor?: string }): Maybe<OverridePage> {
    return thenMaybe(this.existingNamespace(principal.workspaceId, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "read_override");
      const limit = input.limit ?? DEFAULT_OVERRIDE_PAGE;
      const page = { limit: limit + 1, ...(input.cursor !== undefined ? { cursor: input.cursor } : {}) };
      const budget = this.deps.pageBytes ?? DEFAULT_PAGE_BYTES;
      return this.deps.records.read(function* (r) {
        const rows = yield* step(r.overrides.listLive(ns.id, page));
        return fitPage(rows.slice(0, limit).map(toView), (view) => view.overrideId, jsonBytes, budget, rows[limit]?.id);
      });
    });
  }

  /** ratelimit.listNamespaces: the live namespaces whose overrides the key may read, paged by id (see namespace-list.ts). */
  listNamespaces(principal: Principal, input: ListNamespacesInput): Maybe<NamespacePage> {
    return this.deps.records.read((r) => listNamespaces(r, principal, input, this.deps.pageBytes ?? DEFAULT_PAGE_BYTES));
  }

  /** Soft-deletes the override stored with exactly this identifier. Needs `delete_override`. */
  deleteOverride(principal: Principal, input: { namespace: string; identifier: string }): Maybe<Record<string, never>> {
    const ws = principal.workspaceId;
    return thenMaybe(this.existingNamespace(ws, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "delete_override");
      return thenMaybe(this.namespaces.overridesOf(ns), (index) => {
        const now = this.deps.clock.now();
        const deleted = this.deps.records.write(ws, function* (r) {
          yield r.locks.hold({ workspaceId: ws, kind: "override", id: `${ns.id}/${input.identifier}` });
          const found = yield* step(r.overrides.findLive(ns.id, input.identifier));
          if (!found) throw overrideNotFound();
          yield r.overrides.markDeleted(found.id, now);
          yield writeAudit(r, {
            workspaceId: ws, event: "ratelimit.delete_override", actor: principal.actor, timeMs: now,
            resources: [{ type: "ratelimitNamespace", id: ns.id, name: ns.name }, { type: "ratelimitOverride", id: found.id, name: found.identifier }],
            description: `Deleted override ${found.id} for '${found.identifier}'`,
          });
        });
        return then(deleted, () => {
          index.remove(input.identifier);
          this.cache.resized(ns);
          return {};
        });
      });
    });
  }

  /** Forgets cached namespaces and overrides (of one workspace, or all) after rows were changed outside this service. */
  forgetCached(workspaceId?: string): void {
    this.namespaces.forget(workspaceId);
  }

  /** Another node changed the workspace's records (its change notice, storage/pg/changes.ts): its cached namespaces and overrides go. */
  workspaceChanged(workspaceId: string): void {
    this.namespaces.forget(workspaceId);
  }

  /** A live namespace for the override routes, the cached one or else the records' (then cached): missing or deleted is 404. */
  private existingNamespace(workspaceId: string, ref: string): Maybe<NamespaceEntry> {
    const cached = this.cache.get(workspaceId, ref);
    const ns = cached ?? then(this.deps.records.read((r) => findNamespaceIn(r, workspaceId, ref)), (found) => found && this.cache.put(workspaceId, found));
    return then(ns, (entry) => {
      if (!entry || entry.deleted) throw namespaceNotFound();
      return entry;
    });
  }
}
