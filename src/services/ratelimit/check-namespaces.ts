/**
 * The namespaces and override indexes a check needs: the cached ones, else read (check-reads.ts) and
 * cached. When the reads answer promises (the cluster), concurrent misses on one node share one read,
 * and concurrent first checks of a new namespace share one creation, so that a burst of checks does
 * not become a burst of racing transactions (PostgreSQL would abort all but one and run them again).
 * Embedded, every answer is synchronous and nothing is held while pending.
 */
import type { RecordBackend } from "../../storage/records/index.ts";
import { then, type Maybe } from "../../storage/work.ts";
import type { Actor } from "../auth/index.ts";
import { withinQuotas, type WorkspaceQuotas } from "../quotas/index.ts";
import type { CheckReads } from "./check-reads.ts";
import { NamespaceCache, namespaceEntry, type NamespaceEntry } from "./namespace-cache.ts";
import type { OverrideLoader } from "./override-loader.ts";
import type { NamespaceOverrides } from "./overrides.ts";
import { createNamespacesIn, type NamespaceRecord } from "./records.ts";

/** A namespace ref or name within its workspace, as a key of the pending maps. */
const keyOf = (workspaceId: string, ref: string) => `${workspaceId}\n${ref}`;

/** Holds `answer` under `key` until it settles. */
function hold<T>(pending: Map<string, Promise<T>>, key: string, answer: Promise<T>): void {
  pending.set(key, answer);
  const forget = () => {
    if (pending.get(key) === answer) pending.delete(key);
  };
  answer.then(forget, forget);
}

export class CheckNamespaces {
  /** Lookups under way, by workspace and ref. */
  private readonly lookups = new Map<string, Promise<NamespaceEntry | undefined>>();
  /** Creations under way, by workspace and name. */
  private readonly creations = new Map<string, Promise<NamespaceEntry>>();
  /** Counts `forget` calls: a lookup that saw one while pending is used but not cached, as it may be stale. */
  private forgets = 0;

  constructor(
    private readonly cache: NamespaceCache,
    private readonly reads: CheckReads,
    private readonly records: RecordBackend,
    private readonly loader: OverrideLoader,
    private readonly quotas?: WorkspaceQuotas,
  ) {}

  /** A check's namespace for `ref`: the cached one, else the records' (then cached); deleted ones included. */
  lookup(workspaceId: string, ref: string): Maybe<NamespaceEntry | undefined> {
    const cached = this.cache.get(workspaceId, ref);
    if (cached !== undefined) return cached;
    const key = this.lookups.size === 0 ? undefined : keyOf(workspaceId, ref);
    const pending = key === undefined ? undefined : this.lookups.get(key);
    if (pending !== undefined) return pending;
    const found = this.reads.findNamespace(workspaceId, ref);
    if (!(found instanceof Promise)) return found && this.cache.put(workspaceId, found);
    const forgets = this.forgets;
    const entry = found.then((record) => record && this.entryOf(workspaceId, record, forgets));
    hold(this.lookups, key ?? keyOf(workspaceId, ref), entry);
    return entry;
  }

  /**
   * Creates namespaces named `names` in one transaction, one audit entry each; in the cluster a name
   * whose creation is under way waits for it instead. Answers every name's entry.
   */
  create(workspaceId: string, actor: Actor, names: readonly string[], nowMs: number): Maybe<Map<string, NamespaceEntry>> {
    const shared = this.creations.size === 0 ? [] : names.filter((name) => this.creations.has(keyOf(workspaceId, name)));
    const fresh = shared.length === 0 ? names : names.filter((name) => !shared.includes(name));
    const written = fresh.length === 0 ? [] : this.records.write(workspaceId, withinQuotas(this.quotas, workspaceId, (r) => createNamespacesIn(r, workspaceId, actor, fresh, nowMs)));
    const cached = (pairs: Array<readonly [string, NamespaceRecord]>) => new Map(pairs.map(([name, ns]) => [name, this.cache.put(workspaceId, ns)]));
    if (!(written instanceof Promise) && shared.length === 0) return cached(written);
    const created = Promise.resolve(written).then(cached);
    for (const name of fresh) hold(this.creations, keyOf(workspaceId, name), created.then((entries) => entries.get(name)!));
    const waited = shared.map((name) => this.creations.get(keyOf(workspaceId, name))!.then((ns) => [name, ns] as const));
    return Promise.all([created, ...waited]).then(([own, ...others]) => new Map([...own, ...others]));
  }

  /** The namespace's override index, built on first use; concurrent first uses in the cluster share one build. */
  overridesOf(ns: NamespaceEntry): Maybe<NamespaceOverrides> {
    if (ns.overrides !== undefined) return ns.overrides;
    if (ns.overridesLoading !== undefined) return ns.overridesLoading;
    const loaded = this.loader.load(ns.id);
    if (!(loaded instanceof Promise)) return this.indexed(ns, loaded);
    const loading = loaded.then((index) => this.indexed(ns, index)).finally(() => {
      ns.overridesLoading = undefined;
    });
    ns.overridesLoading = loading;
    return loading;
  }

  /** Forgets cached namespaces and overrides (of one workspace, or all), and what pending reads would cache. */
  forget(workspaceId?: string): void {
    this.cache.clear(workspaceId);
    this.forgets++;
    this.lookups.clear();
  }

  private entryOf(workspaceId: string, record: NamespaceRecord, forgets: number): NamespaceEntry {
    return forgets === this.forgets ? this.cache.put(workspaceId, record) : namespaceEntry(workspaceId, record);
  }

  private indexed(ns: NamespaceEntry, index: NamespaceOverrides): NamespaceOverrides {
    ns.overrides = index;
    this.cache.resized(ns);
    return index;
  }
}
