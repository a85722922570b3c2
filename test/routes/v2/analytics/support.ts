/**
 * Analytics test data written straight into the physical tables (the event pipeline is tested on
 * its own), in two opted-in workspaces: `default` (the bootstrap key's) and `other`; on either
 * backend through store.ts.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { batchRows, RAW_LAYOUT } from "../../../../src/services/analytics/raw-events.ts";
import { ALL_GRANTS } from "../../../../src/services/auth/index.ts";
import type { ApiResponse, Harness } from "../../../support/harness.ts";
import { TEST_ACTOR, createApi } from "../../../support/contract.ts";
import { insertEvents, insertRollups } from "./store.ts";

export const DAY = 86_400_000;
export const startOfDay = (ms: number) => Math.floor(ms / DAY) * DAY;

export type Granularity = "minute" | "hour" | "day" | "month";

export interface Verification {
  time: number;
  workspaceId: string;
  keySpaceId: string;
  keyId?: string;
  identityId?: string;
  externalId?: string;
  outcome?: string;
  tags?: string[];
  spentCredits?: number;
  latencyMs?: number;
}

/**
 * One row of analytics.db's `verification_rollups_<granularity>` counting `count` verifications, added to its
 * `verification_totals_<granularity>` row as the event writer would.
 */
export function insertRollup(sqlite: Database, granularity: Granularity, v: Verification & { count: number }): void {
  sqlite.run(
    `INSERT INTO verification_totals_${granularity} (time, workspace_id, key_space_id, outcome, count, spent_credits) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (workspace_id, time, key_space_id, outcome) DO UPDATE SET count = count + excluded.count, spent_credits = spent_credits + excluded.spent_credits`,
    [v.time, v.workspaceId, v.keySpaceId, v.outcome ?? "VALID", v.count, v.spentCredits ?? 0],
  );
  sqlite.run(
    `INSERT INTO verification_rollups_${granularity} (time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, count, spent_credits, latency_sum_ms, latency_max_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [v.time, v.workspaceId, v.keySpaceId, v.keyId ?? "key_x", v.identityId ?? "", v.externalId ?? "", v.outcome ?? "VALID",
      JSON.stringify(v.tags ?? []), v.count, v.spentCredits ?? 0, (v.latencyMs ?? 1) * v.count, v.latencyMs ?? 1],
  );
}

let requestSeq = 0;

/** One raw event in analytics.db, stored as the event writer stores it: a batch row of its own. */
export function insertEvent(sqlite: Database, v: Verification): void {
  const [row] = batchRows([{
    requestId: `req_test${++requestSeq}`, timeMs: v.time, workspaceId: v.workspaceId, keySpaceId: v.keySpaceId, keyId: v.keyId ?? "key_x",
    identityId: v.identityId ?? "", externalId: v.externalId ?? "", outcome: v.outcome ?? "VALID", tags: JSON.stringify(v.tags ?? []),
    spentCredits: v.spentCredits ?? 0, latencyMs: v.latencyMs ?? 1,
  }]);
  sqlite.run(
    `INSERT INTO verification_event_batches (workspace_id, key_space_id, min_time, max_time, event_count, events, layout) VALUES (?, ?, ?, ?, ?, ?, ${RAW_LAYOUT})`,
    [row!.workspaceId, row!.keySpaceId, row!.minTime, row!.maxTime, row!.eventCount, row!.events],
  );
}

/** 2,000³ joined rows, none passing the WHERE: a runaway the watchdog never sees (with seedEventsBeside). */
export const RUNAWAY_REJECTING_ALL = "SELECT count() AS n FROM key_verifications_v1 AS a, key_verifications_v1 AS b, key_verifications_v1 AS c WHERE a.latency + b.latency + c.latency < 0";

/**
 * `count` events of workspace `default` (key space `ks_load`) written into the data dir of a
 * running `serve`, beside it, as its event writer would.
 */
export function seedEventsBeside(dataDir: string, opts: { count: number; outcome?: string }): void {
  const main = new Database(join(dataDir, "tollgate.db"), { readonly: true });
  const workspaceId = main.query<{ id: string }, []>("SELECT id FROM workspaces WHERE name = 'default'").get()!.id;
  main.close();
  const analytics = new Database(join(dataDir, "analytics.db"));
  analytics.run("PRAGMA busy_timeout = 5000");
  analytics.transaction(() => {
    for (let i = 0; i < opts.count; i++) {
      insertEvent(analytics, { time: Date.now() - i, workspaceId, keySpaceId: "ks_load", latencyMs: 1, ...(opts.outcome ? { outcome: opts.outcome } : {}) });
    }
  })();
  analytics.close();
}

export interface AnalyticsWorld {
  /** Workspace ids. */
  wsA: string;
  wsB: string;
  /** Two APIs of `default` and their key spaces. */
  api1: string;
  api2: string;
  ks1: string;
  ks2: string;
  /** Every grant, in workspace `other`. */
  keyB: string;
}

export async function keySpaceOf(h: Harness, apiId: string): Promise<string> {
  const [row] = await h.records.rows<{ key_space_id: string }>("SELECT key_space_id FROM apis WHERE id = ?", apiId);
  if (!row) throw new Error(`no API ${apiId}`);
  return row.key_space_id;
}

/**
 * Opts `default` and a new workspace `other` in, creates two APIs in `default`, and seeds day
 * rollups (see the comment in the body for the numbers the tests expect).
 */
export async function seedWorld(h: Harness): Promise<AnalyticsWorld> {
  const ws = h.running.services.workspaces;
  await ws.setAnalytics("default", true, TEST_ACTOR);
  await ws.create({ name: "other", analyticsEnabled: true }, TEST_ACTOR);
  const api1 = await createApi(h, "analytics-1");
  const api2 = await createApi(h, "analytics-2");
  const world: AnalyticsWorld = {
    wsA: (await ws.get("default")).id, wsB: (await ws.get("other")).id, api1, api2, ks1: await keySpaceOf(h, api1), ks2: await keySpaceOf(h, api2),
    keyB: await h.rootKeyWith([...ALL_GRANTS], "other"),
  };
  const day = (ago: number) => startOfDay(h.clock.now()) - ago * DAY;
  const { wsA, wsB, ks1, ks2 } = world;
  // default: alice 10 VALID + 2 RATE_LIMITED and bob 5 VALID yesterday; bob 7 VALID + 1
  // USAGE_EXCEEDED three days ago; alice 100 VALID ten days ago. Totals: 125 (25 in the last 7
  // days), VALID 122 (22); alice 112 (12), bob 13 (13); api2 (ks2) 6.
  // other: 1000 and 500 VALID verifications by its own alice, which must never show in default.
  await insertRollups(h, "day", [
    { time: day(1), workspaceId: wsA, keySpaceId: ks1, keyId: "key_1", externalId: "alice", count: 10 },
    { time: day(1), workspaceId: wsA, keySpaceId: ks1, keyId: "key_1", externalId: "alice", outcome: "RATE_LIMITED", count: 2 },
    { time: day(1), workspaceId: wsA, keySpaceId: ks2, keyId: "key_2", externalId: "bob", count: 5 },
    { time: day(3), workspaceId: wsA, keySpaceId: ks1, keyId: "key_3", externalId: "bob", count: 7 },
    { time: day(3), workspaceId: wsA, keySpaceId: ks2, keyId: "key_2", externalId: "bob", outcome: "USAGE_EXCEEDED", count: 1 },
    { time: day(10), workspaceId: wsA, keySpaceId: ks1, keyId: "key_1", externalId: "alice", count: 100 },
    { time: day(1), workspaceId: wsB, keySpaceId: "ks_other", keyId: "key_9", externalId: "alice", count: 1000 },
    { time: day(2), workspaceId: wsB, keySpaceId: "ks_other", keyId: "key_9", externalId: "alice", count: 500 },
  ]);
  // Raw events: 3 in default (2 VALID, 1 RATE_LIMITED), 2 in other.
  await insertEvents(h, [
    { time: h.clock.now() - 1000, workspaceId: wsA, keySpaceId: ks1, keyId: "key_1", externalId: "alice", latencyMs: 2 },
    { time: h.clock.now() - 2000, workspaceId: wsA, keySpaceId: ks2, keyId: "key_2", externalId: "bob", latencyMs: 4 },
    { time: h.clock.now() - 3000, workspaceId: wsA, keySpaceId: ks1, keyId: "key_1", outcome: "RATE_LIMITED", latencyMs: 6 },
    { time: h.clock.now() - 1000, workspaceId: wsB, keySpaceId: "ks_other", keyId: "key_9", externalId: "alice" },
    { time: h.clock.now() - 2000, workspaceId: wsB, keySpaceId: "ks_other", keyId: "key_9", externalId: "alice" },
  ]);
  return world;
}

/** POSTs one analytics query with `key` (the bootstrap key by default). */
export function runQuery(h: Harness, query: string, key?: string): Promise<ApiResponse> {
  return h.post("/v2/analytics.getVerifications", { query }, key === undefined ? {} : { key });
}
