/**
 * The check path of RatelimitService (`limit`, `multiLimit`): the namespace (created on first use),
 * the applied override, then the window limiter. Each step answers a Maybe and the next tests it for
 * a promise rather than mapping it through `then`, so that the embedded mode, where every answer is
 * synchronous, makes no closure and no promise on the way; in the cluster the namespace reads and
 * creation, an override index's build or spilled lookup, and the window store answer promises.
 */
import type { Clock } from "../../lib/clock.ts";
import { then, type Maybe } from "../../storage/work.ts";
import { AppError } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import type { CheckNamespaces } from "./check-namespaces.ts";
import type { NamespaceEntry } from "./namespace-cache.ts";
import type { Found, NamespaceOverrides } from "./overrides.ts";
import type { BatchResult, LimitRequest, LimitResult } from "./sliding-window.ts";
import type { WindowLimiter } from "./window-limiter.ts";
import { effectiveDurationMs } from "./durations.ts";
import type { LimitInput, LimitOutcome, MultiLimitCheck, RatelimitDecisionRecorder } from "./views.ts";

export interface CheckDeps {
  namespaces: CheckNamespaces;
  limiter: WindowLimiter;
  clock: Clock;
  /** None when analytics recording is off. */
  decisions?: RatelimitDecisionRecorder | undefined;
}

const namespaceGone = () => new AppError("ratelimit_namespace_gone", { detail: "This namespace has been deleted. Contact support to restore." });

/** Every answer, at once when none is a promise (the same array, nothing allocated), else when all are. */
function all<T>(answers: Array<Maybe<T>>): Maybe<T[]> {
  for (const answer of answers) if (answer instanceof Promise) return Promise.all(answers);
  return answers as T[];
}

export type MultiLimitOutcome = { passed: boolean; limits: MultiLimitCheck[] };

/** A check ready for the limiter: the request with the applied override's limit and duration. */
interface PlannedLimit {
  request: LimitRequest;
  overrideId: string | undefined;
}

export class RatelimitChecks {
  constructor(private readonly deps: CheckDeps) {}

  /** RatelimitService.limit. */
  limit(principal: Principal, input: LimitInput): Maybe<LimitOutcome> {
    const ns = this.namespaceForLimit(principal, input.namespace);
    return ns instanceof Promise ? ns.then((known) => this.limitIn(known, input)) : this.limitIn(ns, input);
  }

  private limitIn(ns: NamespaceEntry, input: LimitInput): Maybe<LimitOutcome> {
    const planned = this.plan(ns, input);
    return planned instanceof Promise ? planned.then((p) => this.charge(ns, p)) : this.charge(ns, planned);
  }

  private charge(ns: NamespaceEntry, planned: PlannedLimit): Maybe<LimitOutcome> {
    const result = this.deps.limiter.check(planned.request);
    return result instanceof Promise ? result.then((r) => this.decided(ns, r, planned.overrideId)) : this.decided(ns, result, planned.overrideId);
  }

  private decided(ns: NamespaceEntry, result: LimitResult, overrideId: string | undefined): LimitOutcome {
    this.deps.decisions?.record(ns.workspaceId, ns.id, result.success, this.deps.clock.now());
    return toOutcome(result, overrideId);
  }

  /** RatelimitService.multiLimit. */
  multiLimit(principal: Principal, inputs: readonly LimitInput[]): Maybe<MultiLimitOutcome> {
    const namespaces = this.namespacesForLimit(principal, inputs.map((i) => i.namespace));
    return namespaces instanceof Promise ? namespaces.then((known) => this.multiLimitIn(known, inputs)) : this.multiLimitIn(namespaces, inputs);
  }

  private multiLimitIn(namespaces: Map<string, NamespaceEntry>, inputs: readonly LimitInput[]): Maybe<MultiLimitOutcome> {
    const checked = inputs.map((i) => namespaces.get(i.namespace)!);
    const planned = all(inputs.map((input, i) => this.plan(checked[i]!, input)));
    return planned instanceof Promise ? planned.then((p) => this.chargeAll(checked, inputs, p)) : this.chargeAll(checked, inputs, planned);
  }

  private chargeAll(checked: readonly NamespaceEntry[], inputs: readonly LimitInput[], planned: readonly PlannedLimit[]): Maybe<MultiLimitOutcome> {
    const batch = this.deps.limiter.checkAll(planned.map((p) => p.request));
    return batch instanceof Promise ? batch.then((b) => this.decidedAll(checked, inputs, planned, b)) : this.decidedAll(checked, inputs, planned, batch);
  }

  private decidedAll(checked: readonly NamespaceEntry[], inputs: readonly LimitInput[], planned: readonly PlannedLimit[], batch: BatchResult): MultiLimitOutcome {
    this.recordAll(checked, batch.results);
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

  /** namespacesForLimit for one ref, without its bookkeeping when the namespace is known. */
  private namespaceForLimit(principal: Principal, ref: string): Maybe<NamespaceEntry> {
    const ns = this.deps.namespaces.lookup(principal.workspaceId, ref);
    return ns instanceof Promise ? ns.then((found) => this.limitable(principal, ref, found)) : this.limitable(principal, ref, ns);
  }

  private limitable(principal: Principal, ref: string, ns: NamespaceEntry | undefined): Maybe<NamespaceEntry> {
    if (ns === undefined) return then(this.namespacesForLimit(principal, [ref]), (found) => found.get(ref)!);
    if (ns.deleted) throw namespaceGone();
    requirePermission(principal, "ratelimit", ns.id, "limit");
    return ns;
  }

  /**
   * The namespaces of a limit request by ref. Deleted → 410; each existing one needs `limit`;
   * missing ones need `create_namespace` and `ratelimit.*.limit`, checked before any is created.
   */
  private namespacesForLimit(principal: Principal, refs: readonly string[]): Maybe<Map<string, NamespaceEntry>> {
    const ws = principal.workspaceId;
    const unique = [...new Set(refs)];
    const looked = all(unique.map((ref) => this.deps.namespaces.lookup(ws, ref)));
    return looked instanceof Promise ? looked.then((l) => this.limitableAll(principal, unique, l)) : this.limitableAll(principal, unique, looked);
  }

  private limitableAll(principal: Principal, refs: readonly string[], looked: ReadonlyArray<NamespaceEntry | undefined>): Maybe<Map<string, NamespaceEntry>> {
    const found = new Map<string, NamespaceEntry>();
    const missing: string[] = [];
    for (let i = 0; i < refs.length; i++) {
      const ns = looked[i];
      if (ns === undefined) missing.push(refs[i]!);
      else found.set(refs[i]!, ns);
    }
    for (const ns of found.values()) if (ns.deleted) throw namespaceGone();
    for (const ns of found.values()) requirePermission(principal, "ratelimit", ns.id, "limit");
    if (missing.length === 0) return found;
    requirePermission(principal, "ratelimit", "*", "create_namespace");
    requirePermission(principal, "ratelimit", "*", "limit");
    return then(this.deps.namespaces.create(principal.workspaceId, principal.actor, missing, this.deps.clock.now()), (created) => {
      for (const [ref, ns] of created) found.set(ref, ns);
      return found;
    });
  }

  /**
   * The limiter request for one input: an applied override replaces its limit and duration (an
   * override stored by an older version with a duration outside the bounds is clamped into them).
   */
  private plan(ns: NamespaceEntry, input: LimitInput): Maybe<PlannedLimit> {
    const index = this.deps.namespaces.overridesOf(ns);
    return index instanceof Promise ? index.then((loaded) => this.planWith(ns, loaded, input)) : this.planWith(ns, index, input);
  }

  private planWith(ns: NamespaceEntry, index: NamespaceOverrides, input: LimitInput): Maybe<PlannedLimit> {
    const override = index.match(input.identifier);
    return override instanceof Promise ? override.then((found: Found) => planned(ns, input, found)) : planned(ns, input, override);
  }
}

function planned(ns: NamespaceEntry, input: LimitInput, override: Found): PlannedLimit {
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

function toOutcome(r: LimitResult, overrideId: string | undefined): LimitOutcome {
  const out: LimitOutcome = { success: r.success, limit: r.limit, remaining: r.remaining, reset: r.resetMs };
  if (overrideId !== undefined) out.overrideId = overrideId;
  return out;
}
