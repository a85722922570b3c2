/**
 * Verification counts of a workspace since a point in time, by API and outcome, read from the
 * totals tables (per key space and outcome, kept by the event writer in the events' transaction).
 * The hour totals answer for whole hours and the minute totals for the part of the first hour after
 * `since`: a week is a few hundred rows per API and outcome instead of ten thousand minutes.
 * Counts are of whole minutes (a minute that starts before `since` is left out); counts older than
 * the tables' retention are gone; the events still buffered in a running `serve` are not written yet.
 */
import { and, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { apis, verificationTotalsPerHour, verificationTotalsPerMinute } from "../../storage/schema/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { liveApi } from "../apis/index.ts";
import { sqliteRecords } from "../../storage/records/index.ts";
import { runNow, type Maybe } from "../../storage/work.ts";
import { bucketStartMs } from "./rollups.ts";

export interface ApiVerificationCounts {
  /** Null for the keys of an API that no longer exists. */
  apiId: string | null;
  name: string | null;
  total: number;
  outcomes: Record<string, number>;
}

export interface VerificationSummary {
  sinceMs: number;
  total: number;
  outcomes: Record<string, number>;
  apis: ApiVerificationCounts[];
}

const HOUR_MS = 3_600_000;

/** Who reads the totals for `tollgate stats`: analytics.db's (VerificationTotals) or the cluster's (pg-totals.ts). */
export interface VerificationTotalsReader {
  since(principal: Principal, input: { sinceMs: number; apiId?: string }): Maybe<VerificationSummary>;
}

/** The first whole hour from `sinceMs`: the minute totals answer before it, the hour totals from it. */
export function firstWholeHourMs(sinceMs: number): number {
  return bucketStartMs("hour", sinceMs + HOUR_MS - 1);
}

/** Counts by key space and outcome as a summary, by API (`apis`: each key space's), the busiest first. */
export function summarize(
  sinceMs: number, rows: ReadonlyArray<{ keySpaceId: string; outcome: string; count: number }>, apis: ReadonlyMap<string, { apiId: string | null; name: string | null }>,
): VerificationSummary {
  const summary: VerificationSummary = { sinceMs, total: 0, outcomes: {}, apis: [] };
  const byKeySpace = new Map<string, ApiVerificationCounts>();
  for (const row of rows) {
    let api = byKeySpace.get(row.keySpaceId);
    if (!api) {
      api = { ...(apis.get(row.keySpaceId) ?? { apiId: null, name: null }), total: 0, outcomes: {} };
      byKeySpace.set(row.keySpaceId, api);
      summary.apis.push(api);
    }
    api.total += row.count;
    api.outcomes[row.outcome] = (api.outcomes[row.outcome] ?? 0) + row.count;
    summary.total += row.count;
    summary.outcomes[row.outcome] = (summary.outcomes[row.outcome] ?? 0) + row.count;
  }
  summary.apis.sort((a, b) => b.total - a.total);
  return summary;
}

export class VerificationTotals implements VerificationTotalsReader {
  constructor(private readonly deps: { storage: Storage; analytics: Storage }) {}

  /**
   * Verifications of the principal's workspace (or of one API) from `sinceMs` on, by API and
   * outcome. Needs `read_analytics` on the API, or on every API without one.
   */
  since(principal: Principal, input: { sinceMs: number; apiId?: string }): VerificationSummary {
    requirePermission(principal, "api", input.apiId ?? "*", "read_analytics");
    const keySpaceIds = input.apiId === undefined ? undefined : [runNow(liveApi(sqliteRecords(this.deps.storage.db), principal.workspaceId, input.apiId)).keySpaceId];
    const firstHourMs = firstWholeHourMs(input.sinceMs);
    const rows = [
      ...this.read(verificationTotalsPerMinute, principal.workspaceId, input.sinceMs, firstHourMs, keySpaceIds),
      ...this.read(verificationTotalsPerHour, principal.workspaceId, firstHourMs, Number.POSITIVE_INFINITY, keySpaceIds),
    ];
    const keySpaces = new Set(rows.map((r) => r.keySpaceId));
    return summarize(input.sinceMs, rows, new Map([...keySpaces].map((id) => [id, this.apiOf(principal.workspaceId, id)])));
  }

  /** Counts by key space and outcome of the buckets in [fromMs, toMs). */
  private read(table: typeof verificationTotalsPerMinute, workspaceId: string, fromMs: number, toMs: number, keySpaceIds: string[] | undefined) {
    if (fromMs >= toMs) return [];
    const conditions = [eq(table.workspaceId, workspaceId), gte(table.time, fromMs)];
    if (toMs !== Number.POSITIVE_INFINITY) conditions.push(lt(table.time, toMs));
    if (keySpaceIds) conditions.push(inArray(table.keySpaceId, keySpaceIds));
    return this.deps.analytics.db.select({ keySpaceId: table.keySpaceId, outcome: table.outcome, count: sql<number>`sum(${table.count})` })
      .from(table).where(and(...conditions)).groupBy(table.keySpaceId, table.outcome).all();
  }

  /** The API of a key space, deleted ones too (their counts stay), or nulls when none is known. */
  private apiOf(workspaceId: string, keySpaceId: string): { apiId: string | null; name: string | null } {
    const api = this.deps.storage.db.select({ id: apis.id, name: apis.name }).from(apis)
      .where(and(eq(apis.workspaceId, workspaceId), eq(apis.keySpaceId, keySpaceId))).get();
    return { apiId: api?.id ?? null, name: api?.name ?? null };
  }
}
