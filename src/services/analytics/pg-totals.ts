/**
 * `tollgate stats` in the cluster mode: verification counts of a workspace since a time, by API
 * and outcome, read from PostgreSQL's totals tables (which every node adds to with its events), as
 * totals.ts reads analytics.db's: the minute totals for the part of the first hour after `since`,
 * the hour totals for every whole hour after. The API of a key space comes from the records,
 * deleted APIs included (their counts stay).
 */
import type { SQL } from "bun";
import { PG_ANALYTICS, qualifiedName } from "../../storage/pg/analytics-tables.ts";
import type { RecordBackend } from "../../storage/records/index.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import { liveApi } from "../apis/index.ts";
import { firstWholeHourMs, summarize, type VerificationSummary, type VerificationTotalsReader } from "./totals.ts";

interface CountRow {
  keySpaceId: string;
  outcome: string;
  count: number;
}

export class PgVerificationTotals implements VerificationTotalsReader {
  /** `sql`: the cluster's database; `records`: its record stores, for the API asked about. */
  constructor(private readonly deps: { sql: SQL; records: RecordBackend }) {}

  /** Verifications of the principal's workspace (or of one API) from `sinceMs` on; needs `read_analytics` as totals.ts does. */
  async since(principal: Principal, input: { sinceMs: number; apiId?: string }): Promise<VerificationSummary> {
    requirePermission(principal, "api", input.apiId ?? "*", "read_analytics");
    const { workspaceId } = principal;
    const keySpaceIds = input.apiId === undefined ? null : [(await this.deps.records.read((r) => liveApi(r, workspaceId, input.apiId!))).keySpaceId];
    const firstHourMs = firstWholeHourMs(input.sinceMs);
    const rows = [
      ...await this.read(qualifiedName(PG_ANALYTICS.totals.minute), workspaceId, input.sinceMs, firstHourMs, keySpaceIds),
      ...await this.read(qualifiedName(PG_ANALYTICS.totals.hour), workspaceId, firstHourMs, null, keySpaceIds),
    ];
    const apis = new Map<string, { apiId: string | null; name: string | null }>();
    const ids = [...new Set(rows.map((r) => r.keySpaceId))];
    if (ids.length > 0) {
      const found: Array<{ id: string; name: string; key_space_id: string }> = await this.deps.sql`
        SELECT id, name, key_space_id FROM apis WHERE workspace_id = ${workspaceId} AND key_space_id = ANY(${ids}::text[])`;
      for (const api of found) apis.set(api.key_space_id, { apiId: api.id, name: api.name });
    }
    return summarize(input.sinceMs, rows, apis);
  }

  /** Counts by key space and outcome of the buckets in [fromMs, toMs) (toMs null: no end). */
  private async read(table: string, workspaceId: string, fromMs: number, toMs: number | null, keySpaceIds: string[] | null): Promise<CountRow[]> {
    if (toMs !== null && fromMs >= toMs) return [];
    const rows: Array<{ key_space_id: string; outcome: string; n: string }> = await this.deps.sql.unsafe(
      `SELECT key_space_id, outcome, sum("count")::int8 AS n FROM ${table}
       WHERE workspace_id = $1 AND "time" >= $2 AND ($3::int8 IS NULL OR "time" < $3) AND ($4::text[] IS NULL OR key_space_id = ANY($4::text[]))
       GROUP BY key_space_id, outcome`,
      [workspaceId, fromMs, toMs, keySpaceIds],
    );
    return rows.map((r) => ({ keySpaceId: r.key_space_id, outcome: r.outcome, count: Number(r.n) }));
  }
}
