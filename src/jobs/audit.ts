/** The daily prune of audit entries past TOLLGATE_AUDIT_RETENTION_DAYS. */
import type { Clock } from "../lib/clock.ts";
import type { AuditService } from "../services/audit/index.ts";
import type { Maybe } from "../storage/work.ts";
import type { ScheduledJob } from "./scheduler.ts";

export interface AuditJobDeps {
  audit: AuditService;
}

/** One pass of the prune at `nowMs`; returns how many entries were deleted. */
export function runAuditPruneOnce(deps: AuditJobDeps, nowMs: number): Maybe<number> {
  return deps.audit.prune(nowMs);
}

/** Daily at 00:10 UTC, away from the midnight credit refill. */
export function auditPruneJob(deps: AuditJobDeps, clock: Clock): ScheduledJob {
  return { name: "audit-prune", pattern: "10 0 * * *", run: async () => { await runAuditPruneOnce(deps, clock.now()); } };
}
