/**
 * The analytics tables of a harness, the same on both backends: analytics.db in the embedded mode,
 * the cluster's schema `analytics` in PostgreSQL on a cluster node (TOLLGATE_TEST_BACKEND=cluster).
 * Tests write events and rollups straight into them (insertEvents, insertRollups) or record them
 * through the real pipeline and then call flushAnalytics; those (dialect, leaks, ratelimits,
 * sdk/analytics) prove the writer of either backend end to end.
 */
import { TEST_BACKEND } from "../../../support/cluster-backend.ts";
import type { Harness } from "../../../support/harness.ts";
import { insertEvent, insertRollup, type Granularity, type Verification } from "./support.ts";

const cluster = TEST_BACKEND === "cluster";

/** Rows as JSON, read by jsonb_to_recordset: one statement for any number of rows. */
async function insertJson(h: Harness, table: string, columns: Record<string, string>, rows: object[], onConflict = ""): Promise<void> {
  if (rows.length === 0) return;
  const names = Object.keys(columns);
  const record = names.map((c) => `${c} ${columns[c]}`).join(", ");
  await h.records.run(
    `INSERT INTO analytics.${table} (${names.join(", ")}) SELECT ${names.join(", ")} FROM jsonb_to_recordset(CAST(CAST(? AS text) AS jsonb)) AS r(${record}) ${onConflict}`,
    JSON.stringify(rows),
  );
}

const EVENT_COLUMNS = {
  request_id: "text", time: "int8", workspace_id: "text", key_space_id: "text", key_id: "text", identity_id: "text",
  external_id: "text", outcome: "text", tags: "text", spent_credits: "int8", latency_ms: "float8",
};
const ROLLUP_COLUMNS = {
  time: "int8", workspace_id: "text", key_space_id: "text", key_id: "text", identity_id: "text", external_id: "text",
  outcome: "text", tags: "text", count: "int8", spent_credits: "int8", latency_sum_ms: "float8", latency_max_ms: "float8",
};
const TOTAL_COLUMNS = { time: "int8", workspace_id: "text", key_space_id: "text", outcome: "text", count: "int8", spent_credits: "int8" };

const ADD_TOTAL = `ON CONFLICT (workspace_id, time, key_space_id, outcome) DO UPDATE SET count = analytics.%t.count + excluded.count,
  spent_credits = analytics.%t.spent_credits + excluded.spent_credits`;
const add = (clause: string, table: string) => clause.replaceAll("%t", table);

let requestSeq = 0;

/** Raw events, one row each (in analytics.db: a batch row each, as support.ts's insertEvent writes them). */
export async function insertEvents(h: Harness, events: readonly Verification[]): Promise<void> {
  if (!cluster) {
    const sqlite = h.embedded.analytics.sqlite;
    sqlite.transaction(() => { for (const v of events) insertEvent(sqlite, v); })();
    return;
  }
  await insertJson(h, "verification_events", EVENT_COLUMNS, events.map((v) => ({
    request_id: `req_test${++requestSeq}`, time: v.time, workspace_id: v.workspaceId, key_space_id: v.keySpaceId, key_id: v.keyId ?? "key_x",
    identity_id: v.identityId ?? "", external_id: v.externalId ?? "", outcome: v.outcome ?? "VALID", tags: JSON.stringify(v.tags ?? []),
    spent_credits: v.spentCredits ?? 0, latency_ms: v.latencyMs ?? 1,
  })));
}

/** Rows of `verification_rollups_<granularity>`, each added to its `verification_totals_<granularity>` row, as support.ts's insertRollup. */
export async function insertRollups(h: Harness, granularity: Granularity, rows: ReadonlyArray<Verification & { count: number }>): Promise<void> {
  if (!cluster) {
    const sqlite = h.embedded.analytics.sqlite;
    sqlite.transaction(() => { for (const v of rows) insertRollup(sqlite, granularity, v); })();
    return;
  }
  for (const v of rows) {
    const outcome = v.outcome ?? "VALID";
    await insertJson(h, `verification_totals_${granularity}`, TOTAL_COLUMNS, [{
      time: v.time, workspace_id: v.workspaceId, key_space_id: v.keySpaceId, outcome, count: v.count, spent_credits: v.spentCredits ?? 0,
    }], add(ADD_TOTAL, `verification_totals_${granularity}`));
    await insertJson(h, `verification_rollups_${granularity}`, ROLLUP_COLUMNS, [{
      time: v.time, workspace_id: v.workspaceId, key_space_id: v.keySpaceId, key_id: v.keyId ?? "key_x", identity_id: v.identityId ?? "",
      external_id: v.externalId ?? "", outcome, tags: JSON.stringify(v.tags ?? []), count: v.count, spent_credits: v.spentCredits ?? 0,
      latency_sum_ms: (v.latencyMs ?? 1) * v.count, latency_max_ms: v.latencyMs ?? 1,
    }]);
  }
}

/** Rows of an analytics table (its name in analytics.db and in schema `analytics` alike). */
export async function analyticsRows(h: Harness, table: string): Promise<number> {
  if (!cluster) return h.embedded.analytics.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
  return h.records.count(`analytics.${table}`);
}

/** Writes what the pipeline holds (verification events, rate-limit decisions) where the queries read it, on either backend. */
export async function flushAnalytics(h: Harness): Promise<void> {
  await h.running.services.verificationEvents.flush();
}
