/**
 * analytics.getVerifications: who may ask (workspace opt-in, `read_analytics`), what they may see
 * (their workspace; for API-scoped keys, those APIs' key spaces; of the rate-limit tables, the
 * namespaces the key may read), and handing the query to the process pool. Compilation and
 * execution happen in a query process (query-process.ts), which alone knows the tables a query
 * reads: a key that may read one family of tables only is refused there for the other.
 */
import type { RecordBackend } from "../../storage/records/index.ts";
import { step } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { AppError } from "../../errors/app-error.ts";
import { grantedIds, requirePermission, type Principal } from "../auth/index.ts";
import { assertQuerySize, type Confinement } from "./query/compile.ts";
import type { Row } from "./execute.ts";
import type { QueryRequest } from "./process-pool.ts";

/** Runs a query outside `serve`'s thread (AnalyticsProcessPool in production). */
export interface AnalyticsQueryRunner {
  run(request: QueryRequest): Promise<Row[]>;
  /** Queries running and waiting, in all workspaces. */
  stats(): { running: number; waiting: number };
  stop(): void;
}

export class AnalyticsQueryService {
  constructor(private readonly deps: { records: RecordBackend; clock: Clock; runner: AnalyticsQueryRunner }) {}

  /**
   * Runs the caller's SQL over their verification analytics; rows as selected (at most the
   * runner's row limit). 412 without the workspace's opt-in, 403 without `read_analytics`, 400 for
   * queries outside the supported subset, 422 past the time or size limits, 429 past the
   * workspace's share of the query processes.
   */
  async getVerifications(principal: Principal, input: { query: string }): Promise<Row[]> {
    await this.requireOptIn(principal.workspaceId);
    const confinement = await this.confinement(principal);
    assertQuerySize(input.query);
    return this.deps.runner.run({ sql: input.query, confinement, nowMs: this.deps.clock.now() });
  }

  /** Queries running and waiting for a query process (tests observe the queue by it). */
  queueStats(): { running: number; waiting: number } {
    return this.deps.runner.stats();
  }

  /** Stops the query processes; pending queries fail with 500 `service_unavailable`. */
  stop(): void {
    this.deps.runner.stop();
  }

  /** Read on every request, so `tollgate workspace update --analytics` applies at once. */
  private async requireOptIn(workspaceId: string): Promise<void> {
    const workspace = await this.deps.records.read((r) => step(r.workspaces.findByIdOrName(workspaceId)));
    if (workspace?.id !== workspaceId || !workspace.analyticsEnabled) {
      throw new AppError("analytics_not_configured", { detail: "Analytics is not enabled for this workspace. An operator can enable it with `tollgate workspace update <workspace> --analytics on`." });
    }
  }

  /**
   * Of key verifications, `api.*.read_analytics`: the whole workspace; `api.<apiId>.read_analytics`:
   * those APIs' key spaces. Of rate-limit decisions, `ratelimit.*.read_analytics` or
   * `ratelimit.<namespaceId>.read_analytics` likewise. 403 naming the first when the key holds neither.
   */
  private async confinement(principal: Principal): Promise<Confinement> {
    const keySpaceIds = await this.keySpaces(principal);
    const namespaceIds = this.namespaces(principal);
    // `read_api` used to grant analytics (v1); it no longer does.
    if (keySpaceIds === undefined && namespaceIds === undefined) requirePermission(principal, "api", "*", "read_analytics");
    return {
      workspaceId: principal.workspaceId,
      ...(keySpaceIds !== undefined ? { keySpaceIds } : {}),
      ...(namespaceIds !== undefined ? { namespaceIds } : {}),
    };
  }

  private namespaces(principal: Principal): readonly string[] | null | undefined {
    return grantedIds(principal, "ratelimit", "read_analytics");
  }

  private async keySpaces(principal: Principal): Promise<readonly string[] | null | undefined> {
    const apiIds = grantedIds(principal, "api", "read_analytics");
    if (!apiIds) return apiIds;
    return this.deps.records.read(function* (r) {
      const keySpaceIds: string[] = [];
      for (const id of apiIds) {
        const api = yield* step(r.apis.findLive(principal.workspaceId, id));
        if (api) keySpaceIds.push(api.keySpaceId);
      }
      return keySpaceIds;
    });
  }
}
