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
import { hourStart, MID_HOUR_EVENTS, MID_HOUR_LATER, MID_HOUR_SINCE_MS, MID_HOUR_SUMMARY } from "./totals-cases.ts";

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
  await record(MID_HOUR_EVENTS);
  const totals = new VerificationTotals({ storage: db.main, analytics: db.storage });
  expect(totals.since(principal("ws_a"), { sinceMs: MID_HOUR_SINCE_MS })).toEqual(MID_HOUR_SUMMARY);
  for (const [sinceMs, total] of MID_HOUR_LATER) expect(totals.since(principal("ws_a"), { sinceMs }).total).toBe(total);
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
