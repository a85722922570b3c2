/**
 * Workspace quotas: how many keys, identities, permissions, roles and rate-limit namespaces a
 * workspace may hold, and how many bytes its records may take (lib/quotas.ts: the variables and
 * defaults). The counts live in `workspace_usage`, kept by the database's own triggers on every
 * write (storage/records/usage.ts), so deletes free room at once and no path can forget to count.
 *
 * Invariants: a unit that creates runs inside `withinQuotas`, which locks the workspace's usage
 * before the unit runs and compares it after: a quota the unit grew past its limit answers 429
 * `workspace_quota_exceeded` and the whole unit rolls back (never partly applied). A unit that
 * only shrinks, or leaves a count as it was, always passes, so deletes and updates that free room
 * work at a full (or lowered) quota; reads and verifications never touch the usage row.
 * Why a check after the writes instead of a prediction before: the triggers count exactly what was
 * written (permissions made on the fly, an identity that already existed, meta as stored), so the
 * check cannot disagree with the counter.
 */
import { AppError } from "../../errors/app-error.ts";
import { DEFAULT_QUOTAS, MiB, QUOTAS, type QuotaDefinition, type QuotaName, type QuotaUse, type WorkspaceQuotas } from "../../lib/quotas.ts";
import type { RecordBackend, Records, WorkspaceUsage } from "../../storage/records/index.ts";
import { step, type Maybe, type Work } from "../../storage/work.ts";

export { DEFAULT_QUOTAS, type QuotaUse, type WorkspaceQuotas } from "../../lib/quotas.ts";

/** A quota's use in `usage`. */
function usedOf(usage: WorkspaceUsage, name: QuotaName): number {
  return name === "storage" ? usage.bytes : usage[name];
}

function exceeded(q: QuotaDefinition, limit: number, before: number, after: number): AppError {
  const storage = q.name === "storage";
  const allowed = storage ? `take ${limit / MiB} MiB (${limit} bytes) of records` : `hold ${limit} ${q.counts}`;
  const amount = (n: number) => (storage ? `${n} bytes` : `${n}`);
  return new AppError("workspace_quota_exceeded", {
    detail: `Workspace quota exceeded: ${q.name}. The workspace may ${allowed} (${q.variable}); `
      + `it ${storage ? "takes" : "holds"} ${amount(before)} and this request would take it to ${amount(after)}. Nothing was changed.`,
  });
}

/** Throws 429 for the first quota that grew from `before` to `after` and is past its limit. */
export function assertWithinQuotas(quotas: WorkspaceQuotas, before: WorkspaceUsage, after: WorkspaceUsage): void {
  for (const q of QUOTAS) {
    const was = usedOf(before, q.name);
    const is = usedOf(after, q.name);
    if (is > was && is > quotas[q.name]) throw exceeded(q, quotas[q.name], was, is);
  }
}

/**
 * `unit` made quota-checked: the workspace's usage is locked first (creators of one workspace count
 * one after another in the cluster too) and checked after `unit`'s writes. For creating units only.
 */
export function withinQuotas<T>(quotas: WorkspaceQuotas | undefined, workspaceId: string, unit: (r: Records) => Work<T>): (r: Records) => Work<T> {
  const limits = quotas ?? DEFAULT_QUOTAS;
  return function* (r) {
    const before = yield* step(r.usage.lock(workspaceId));
    const out = yield* unit(r);
    assertWithinQuotas(limits, before, yield* step(r.usage.read(workspaceId)));
    return out;
  };
}

/** Each quota's use against its limit, in QUOTAS' order (storage in bytes). */
export function quotaUses(quotas: WorkspaceQuotas, usage: WorkspaceUsage): QuotaUse[] {
  return QUOTAS.map((q) => ({ quota: q.name, variable: q.variable, used: usedOf(usage, q.name), limit: quotas[q.name] }));
}

/** What the CLI and the API show: a workspace's use of each quota. */
export class QuotaService {
  constructor(private readonly deps: { records: RecordBackend; quotas: WorkspaceQuotas }) {}

  /** The limits in force (storage in bytes). */
  get limits(): WorkspaceQuotas {
    return this.deps.quotas;
  }

  /** The workspace's use of each quota, in QUOTAS' order, read outside any transaction. No grant needed: any root key of the workspace may see it. */
  usage(workspaceId: string): Maybe<QuotaUse[]> {
    return readQuotaUses(this.deps.records, this.deps.quotas, workspaceId);
  }
}

/** The workspace's use of each quota, read outside any transaction. */
export function readQuotaUses(records: RecordBackend, quotas: WorkspaceQuotas, workspaceId: string): Maybe<QuotaUse[]> {
  return records.read(function* (r) {
    return quotaUses(quotas, yield* step(r.usage.read(workspaceId)));
  });
}
