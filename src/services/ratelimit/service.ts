/**
 * Standalone rate limits (upstream §5.15–§5.17): `limit` / `multiLimit` on (namespace, identifier)
 * and per-identifier overrides. Namespaces are addressed by id or name and created on first use;
 * namespaces and overrides are cached in memory within a bounded number of bytes, so a check on a
 * known namespace reads no SQLite (unless its overrides outgrow their share: override-loader.ts).
 * In the shared limiter a namespace is the scope `${workspaceId}|${namespaceId}` (one string per
 * cached namespace, so its hash is computed once) and the request's identifier is the counter in it.
 *
 * The override routes run as units of work on the records; a check (`limit`, `multiLimit`) stays
 * synchronous in the embedded mode: on a cache miss it reads the SQLite file directly, and it
 * creates a namespace through a write it needs answered at once.
 */
import type { Storage } from "../../storage/db.ts";
import { SqliteNamespaceStore, type RecordBackend } from "../../storage/records/index.ts";
import { answered, runNow, step, then, type Maybe } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { AppError } from "../../errors/app-error.ts";
import { writeAudit } from "../audit/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { NamespaceCache, type NamespaceCacheCaps, type NamespaceEntry } from "./namespace-cache.ts";
import type { OverrideIndex, OverrideRecord } from "./overrides.ts";
import { OverrideLoader } from "./override-loader.ts";
import { listNamespaces, type ListNamespacesInput, type NamespacePage } from "./namespace-list.ts";
import { createNamespacesIn, findNamespaceIn, upsertOverrideIn } from "./records.ts";
import type { LimitRequest, LimitResult, SlidingWindowLimiter } from "./sliding-window.ts";
import { effectiveDurationMs } from "./durations.ts";
import type { LimitInput, LimitOutcome, MultiLimitCheck, OverridePage, OverrideView, RatelimitDecisionRecorder } from "./views.ts";

export interface RatelimitDeps {
  /** Namespaces and overrides, for the override routes and the creation of namespaces. */
  records: RecordBackend;
  /** The SQLite file a check reads on a cache miss: namespaces, override indexes, exact overrides of a spilled index. */
  storage: Storage;
  clock: Clock;
  limiter: SlidingWindowLimiter;
  /** Memory of the namespaces (with their overrides) held in memory; default DEFAULT_NAMESPACE_CACHE_CAPS. */
  namespaceCacheCaps?: NamespaceCacheCaps;
  /** Live wildcard overrides one namespace may hold; default DEFAULT_WILDCARD_OVERRIDES. */
  wildcardOverridesPerNamespace?: number;
  /** None when analytics recording is off. */
  decisions?: RatelimitDecisionRecorder;
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
const namespaceGone = () => new AppError("ratelimit_namespace_gone", { detail: "This namespace has been deleted. Contact support to restore." });

function toView(o: OverrideRecord): OverrideView {
  return { overrideId: o.id, identifier: o.identifier, limit: o.limit, duration: o.duration };
}

/** `then` for a function that itself answers a Maybe: a promise's `then` flattens the two. */
function thenMaybe<T, U>(answer: Maybe<T>, fn: (value: T) => Maybe<U>): Maybe<U> {
  return then(answer, fn) as Maybe<U>;
}

/** A check ready for the limiter: the request with the applied override's limit and duration. */
interface PlannedLimit {
  request: LimitRequest;
  overrideId: string | undefined;
}

export class RatelimitService {
  private readonly cache: NamespaceCache;
  private readonly overrides: OverrideLoader;

  constructor(private readonly deps: RatelimitDeps) {
    const caps = deps.namespaceCacheCaps ?? DEFAULT_NAMESPACE_CACHE_CAPS;
    this.cache = new NamespaceCache(caps);
    this.overrides = new OverrideLoader(deps.storage, caps.workspaceBytes);
  }

  /** Another node changed the workspace's records: its cached namespaces and overrides are read again. */
  workspaceChanged(workspaceId: string): void {
    this.cache.clear(workspaceId);
  }

  /** Cached namespaces and the bytes charged for them (with their overrides); `bytes` of one workspace when named. */
  namespaceCacheStats(workspaceId?: string): { entries: number; bytes: number } {
    return this.cache.stats(workspaceId);
  }

  /** One check; 403 without `limit` (or, for a new namespace, `create_namespace`); 410 for a deleted namespace. */
  limit(principal: Principal, input: LimitInput): LimitOutcome {
    const ns = this.namespaceForLimit(principal, input.namespace);
    const planned = this.plan(ns, input);
    const result = this.deps.limiter.check(planned.request);
    this.deps.decisions?.record(ns.workspaceId, ns.id, result.success, this.deps.clock.now());
    return toOutcome(result, planned.overrideId);
  }

  /** Up to 100 checks at one instant, charged all-or-nothing; results in request order. */
  multiLimit(principal: Principal, inputs: readonly LimitInput[]): { passed: boolean; limits: MultiLimitCheck[] } {
    const namespaces = this.namespacesForLimit(principal, inputs.map((i) => i.namespace));
    const planned = inputs.map((i) => this.plan(namespaces.get(i.namespace)!, i));
    const batch = this.deps.limiter.checkAll(planned.map((p) => p.request));
    this.recordAll(inputs.map((i) => namespaces.get(i.namespace)!), batch.results);
    const limits = inputs.map((input, i) => {
      const { success, ...rest } = toOutcome(batch.results[i]!, planned[i]!.overrideId);
      return { namespace: input.namespace, identifier: input.identifier, ...rest, passed: success };
    });
    return { passed: batch.success, limits };
  }

  /** Each check as answered (its own `passed`), also in a batch refused as a whole. */
  private recordAll(namespaces: readonly NamespaceEntry[], results: readonly LimitResult[]): void {
    const recorder = this.deps.decisions;
    if (recorder === undefined) return;
    const nowMs = this.deps.clock.now();
    namespaces.forEach((ns, i) => recorder.record(ns.workspaceId, ns.id, results[i]!.success, nowMs));
  }

  /**
   * Creates or replaces the override for an exact identifier (a pattern may hold `*`); an update
   * keeps its id. A new pattern beyond the namespace's wildcard cap is 412; replacing one is not.
   */
  setOverride(principal: Principal, input: { namespace: string; identifier: string; limit: number; duration: number }): Maybe<{ overrideId: string }> {
    const ws = principal.workspaceId;
    return thenMaybe(this.existingNamespace(ws, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "set_override");
      const now = this.deps.clock.now();
      const index = this.overridesOf(ns);
      const checkWildcardRoom = () => this.checkWildcardRoom(index);
      const record = this.deps.records.write(ws, function* (r) {
        const existing = yield* step(r.overrides.findLive(ns.id, input.identifier));
        if (!existing && input.identifier.includes("*")) checkWildcardRoom();
        const saved = yield* upsertOverrideIn(r, ws, ns.id, existing, input, now);
        yield writeAudit(r, {
          workspaceId: ws, event: "ratelimit.set_override", actor: principal.actor, timeMs: now,
          resources: [{ type: "ratelimitNamespace", id: ns.id, name: ns.name }, { type: "ratelimitOverride", id: saved.id, name: input.identifier }],
          description: `${existing ? "Updated" : "Created"} override ${saved.id} for '${input.identifier}': ${input.limit} per ${input.duration} ms`,
        });
        return saved;
      });
      return then(record, (saved) => {
        index.put(saved);
        this.cache.resized(ns);
        return { overrideId: saved.id };
      });
    });
  }

  /** 412 when a new wildcard would pass the namespace's cap; reads the index only, so a unit may call it. */
  private checkWildcardRoom(index: OverrideIndex): void {
    const cap = this.deps.wildcardOverridesPerNamespace ?? DEFAULT_WILDCARD_OVERRIDES;
    if (index.wildcardCount < cap) return;
    throw new AppError("precondition_failed", {
      detail: `This namespace has ${cap} wildcard overrides (identifiers with '*'), the most it may have. Delete one, or change an existing one.`,
    });
  }

  /** The override that applies to `identifier` (exact, then wildcard). Needs `read_override` (403). */
  getOverride(principal: Principal, input: { namespace: string; identifier: string }): Maybe<OverrideView> {
    return then(this.existingNamespace(principal.workspaceId, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "read_override");
      const found = this.overridesOf(ns).match(input.identifier);
      if (!found) throw overrideNotFound();
      return toView(found);
    });
  }

  /** A page of live overrides by id (limit 1..100, default 50). Needs `read_override`. */
  listOverrides(principal: Principal, input: { namespace: string; limit?: number; cursor?: string }): Maybe<OverridePage> {
    return thenMaybe(this.existingNamespace(principal.workspaceId, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "read_override");
      const limit = input.limit ?? DEFAULT_OVERRIDE_PAGE;
      const page = { limit: limit + 1, ...(input.cursor !== undefined ? { cursor: input.cursor } : {}) };
      return this.deps.records.read(function* (r) {
        const rows = yield* step(r.overrides.listLive(ns.id, page));
        return { items: rows.slice(0, limit).map(toView), cursor: rows[limit]?.id };
      });
    });
  }

  /** ratelimit.listNamespaces: the live namespaces whose overrides the key may read, paged by id (see namespace-list.ts). */
  listNamespaces(principal: Principal, input: ListNamespacesInput): Maybe<NamespacePage> {
    return this.deps.records.read((r) => listNamespaces(r, principal, input));
  }

  /** Soft-deletes the override stored with exactly this identifier. Needs `delete_override`. */
  deleteOverride(principal: Principal, input: { namespace: string; identifier: string }): Maybe<Record<string, never>> {
    const ws = principal.workspaceId;
    return thenMaybe(this.existingNamespace(ws, input.namespace), (ns) => {
      requirePermission(principal, "ratelimit", ns.id, "delete_override");
      const now = this.deps.clock.now();
      const index = this.overridesOf(ns);
      const deleted = this.deps.records.write(ws, function* (r) {
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
  }

  /** Forgets cached namespaces and overrides (of one workspace, or all) after rows were changed outside this service. */
  forgetCached(workspaceId?: string): void {
    this.cache.clear(workspaceId);
  }

  /** A check's namespace for `ref`: the cached one, else the one in SQLite (then cached); deleted ones included. */
  private lookup(workspaceId: string, ref: string): NamespaceEntry | undefined {
    const cached = this.cache.get(workspaceId, ref);
    if (cached !== undefined) return cached;
    const found = runNow(findNamespaceIn({ namespaces: new SqliteNamespaceStore(this.deps.storage.db) }, workspaceId, ref));
    return found ? this.cache.put(workspaceId, found) : undefined;
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

  /** namespacesForLimit for one ref, without its bookkeeping when the namespace is known. */
  private namespaceForLimit(principal: Principal, ref: string): NamespaceEntry {
    const ns = this.lookup(principal.workspaceId, ref);
    if (ns === undefined) return this.namespacesForLimit(principal, [ref]).get(ref)!;
    if (ns.deleted) throw namespaceGone();
    requirePermission(principal, "ratelimit", ns.id, "limit");
    return ns;
  }

  /**
   * The namespaces of a limit request by ref. Deleted → 410; each existing one needs `limit`;
   * missing ones need `create_namespace` and `ratelimit.*.limit`, checked before any is created.
   */
  private namespacesForLimit(principal: Principal, refs: readonly string[]): Map<string, NamespaceEntry> {
    const ws = principal.workspaceId;
    const found = new Map<string, NamespaceEntry>();
    const missing = new Set<string>();
    for (const ref of refs) {
      if (found.has(ref) || missing.has(ref)) continue;
      const ns = this.lookup(ws, ref);
      if (ns === undefined) missing.add(ref);
      else found.set(ref, ns);
    }
    for (const ns of found.values()) if (ns.deleted) throw namespaceGone();
    for (const ns of found.values()) requirePermission(principal, "ratelimit", ns.id, "limit");
    if (missing.size > 0) {
      requirePermission(principal, "ratelimit", "*", "create_namespace");
      requirePermission(principal, "ratelimit", "*", "limit");
      for (const [ref, ns] of this.createNamespaces(principal, [...missing])) found.set(ref, ns);
    }
    return found;
  }

  /**
   * Creates namespaces named `names` in one transaction, one audit entry each. The check that needs
   * them goes on at once, so the write must answer synchronously, as the embedded backend does.
   */
  private createNamespaces(principal: Principal, names: readonly string[]): Map<string, NamespaceEntry> {
    const ws = principal.workspaceId;
    const now = this.deps.clock.now();
    const created = answered(this.deps.records.write(ws, (r) => createNamespacesIn(r, ws, principal.actor, names, now)));
    return new Map(created.map(([name, ns]) => [name, this.cache.put(ws, ns)]));
  }

  private overridesOf(ns: NamespaceEntry): OverrideIndex {
    if (ns.overrides !== undefined) return ns.overrides;
    ns.overrides = this.overrides.load(ns.id);
    this.cache.resized(ns);
    return ns.overrides;
  }

  /**
   * The limiter request for one input: an applied override replaces its limit and duration (an
   * override stored by an older version with a duration outside the bounds is clamped into them).
   */
  private plan(ns: NamespaceEntry, input: LimitInput): PlannedLimit {
    const override = this.overridesOf(ns).match(input.identifier);
    return {
      request: {
        workspace: ns.workspaceId,
        scope: ns.scope,
        identifier: input.identifier,
        limit: override?.limit ?? input.limit,
        durationMs: override === undefined ? input.duration : effectiveDurationMs(override.duration),
        cost: input.cost ?? 1,
      },
      overrideId: override?.id,
    };
  }
}

function toOutcome(r: LimitResult, overrideId: string | undefined): LimitOutcome {
  const out: LimitOutcome = { success: r.success, limit: r.limit, remaining: r.remaining, reset: r.resetMs };
  if (overrideId !== undefined) out.overrideId = overrideId;
  return out;
}
