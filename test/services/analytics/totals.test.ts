/**
 * VerificationTotals: counts since a time from the minute totals (the first, partial hour) and the
 * hour totals (every whole hour after it), so nothing before `since` in its hour is counted and
 * nothing after it is missed; another workspace's counts and another API's are left out.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { SqliteEventWriter, VerificationEventSink, VerificationTotals } from "../../../src/services/analytics/index.ts";
import { ALL_GRANTS } from "../../../src/services/auth/index.ts";
import { apis, keySpaces, workspaces } from "../../../src/storage/schema/index.ts";
import { event, tempDb, type TempDb } from "./support.ts";

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const hourStart = Date.UTC(2026, 5, 15, 10);

let db: TempDb;
beforeEach(() => { db = tempDb(); });
afterEach(() => { db.close(); });

const principal = (workspaceId: string, permissions: string[] = [...ALL_GRANTS]) =>
  ({ workspaceId, rootKeyId: "rk", permissions: new Set(permissions), actor: { type: "cli" as const, id: "cli" } });

function seedApis(): void {
  db.main.db.insert(workspaces).values([{ id: "ws_a", name: "a", createdAt: 0 }, { id: "ws_b", name: "b", createdAt: 0 }]).run();
  db.main.db.insert(keySpaces).values([{ id: "ks_a", workspaceId: "ws_a", createdAt: 0 }, { id: "ks_b", workspaceId: "ws_a", createdAt: 0 }]).run();
  db.main.db.insert(apis).values([
    { id: "api_a", workspaceId: "ws_a", keySpaceId: "ks_a", name: "first", createdAt: 0 },
    { id: "api_b", workspaceId: "ws_a", keySpaceId: "ks_b", name: "second", createdAt: 0, deletedAt: 1 },
  ]).run();
}

async function record(events: Parameters<typeof event>[0][]): Promise<void> {
  const sink = new VerificationEventSink({ writer: new SqliteEventWriter(db.storage) });
  for (const e of events) sink.record(event(e));
  await sink.flush();
}

test("since the middle of an hour: that hour's later minutes and every later hour count; its earlier minutes do not", async () => {
  seedApis();
  await record([
    { timeMs: hourStart + 10 * MINUTE_MS, outcome: "VALID" },
    { timeMs: hourStart + 40 * MINUTE_MS, outcome: "VALID" },
    { timeMs: hourStart + 59 * MINUTE_MS, outcome: "RATE_LIMITED" },
    { timeMs: hourStart + 3 * HOUR_MS, outcome: "VALID" },
    { timeMs: hourStart + 3 * HOUR_MS, outcome: "VALID", keySpaceId: "ks_b" },
    { timeMs: hourStart + 3 * HOUR_MS, outcome: "VALID", workspaceId: "ws_b" },
  ]);
  const totals = new VerificationTotals({ storage: db.main, analytics: db.storage });
  const summary = totals.since(principal("ws_a"), { sinceMs: hourStart + 30 * MINUTE_MS });
  expect(summary).toEqual({
    sinceMs: hourStart + 30 * MINUTE_MS,
    total: 4,
    outcomes: { VALID: 3, RATE_LIMITED: 1 },
    apis: [
      { apiId: "api_a", name: "first", total: 3, outcomes: { VALID: 2, RATE_LIMITED: 1 } },
      // A deleted API's verifications still count, under its id.
      { apiId: "api_b", name: "second", total: 1, outcomes: { VALID: 1 } },
    ],
  });
  expect(totals.since(principal("ws_a"), { sinceMs: hourStart + 59 * MINUTE_MS }).total).toBe(3);
  expect(totals.since(principal("ws_a"), { sinceMs: hourStart + 59 * MINUTE_MS + 1 }).total).toBe(2);
});

test("one API: its counts only; read_analytics on it is enough, on another API is not", async () => {
  seedApis();
  await record([{ timeMs: hourStart, outcome: "VALID" }, { timeMs: hourStart, outcome: "VALID", keySpaceId: "ks_b" }]);
  const totals = new VerificationTotals({ storage: db.main, analytics: db.storage });
  const range = { sinceMs: hourStart, apiId: "api_a" };
  expect(totals.since(principal("ws_a", ["api.api_a.read_analytics"]), range).total).toBe(1);
  expect(() => totals.since(principal("ws_a", ["api.api_b.read_analytics"]), range)).toThrow("read_analytics");
  expect(() => totals.since(principal("ws_a", ["api.api_a.read_analytics"]), { ...range, apiId: undefined })).toThrow("read_analytics");
});
