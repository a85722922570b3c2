/** Rate-limit decisions: counted per namespace and minute in memory, bounded, and added to every granularity's table. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  pruneAnalytics, RatelimitDecisionAggregator, SqliteEventWriter, VerificationEventSink, WorkerEventWriter,
  type DecisionRow, type DecisionRowWriter,
} from "../../../src/services/analytics/index.ts";
import { tempDb, type TempDb } from "./support.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;
/** 2026-03-15 12:30:15 UTC. */
const at = Date.UTC(2026, 2, 15, 12, 30, 15);

let db: TempDb;
beforeEach(() => { db = tempDb(); });
afterEach(() => { db.close(); });

const rowsOf = (table: string) => db.storage.sqlite.query(`SELECT time, workspace_id, namespace_id, passed, blocked FROM ${table} ORDER BY workspace_id, time, namespace_id`).all();

/** A writer that fails its next `failures` writes, and keeps what the others were given. */
class FlakyWriter implements DecisionRowWriter {
  written: DecisionRow[] = [];
  constructor(public failures: number) {}
  writeRatelimitDecisions(rows: readonly DecisionRow[]): Promise<void> {
    if (this.failures-- > 0) return Promise.reject(new Error("disk full"));
    this.written.push(...rows.map((r) => ({ ...r })));
    return Promise.resolve();
  }
}

describe("RatelimitDecisionAggregator", () => {
  test("counts exactly per (workspace, namespace, UTC minute), and writes each count into every granularity", async () => {
    const decisions = new RatelimitDecisionAggregator({ writer: new SqliteEventWriter(db.storage) });
    for (let i = 0; i < 5; i++) decisions.record("ws_a", "ns_1", true, at + i);
    decisions.record("ws_a", "ns_1", false, at);
    decisions.record("ws_a", "ns_1", false, at + MINUTE);
    decisions.record("ws_a", "ns_2", true, at);
    decisions.record("ws_b", "ns_3", false, at);
    expect(decisions.pendingRows).toBe(4);
    expect(await decisions.flush()).toBe(4);
    expect(decisions.pendingRows).toBe(0);
    const minute = Date.UTC(2026, 2, 15, 12, 30);
    expect(rowsOf("ratelimit_decisions_minute")).toEqual([
      { time: minute, workspace_id: "ws_a", namespace_id: "ns_1", passed: 5, blocked: 1 },
      { time: minute, workspace_id: "ws_a", namespace_id: "ns_2", passed: 1, blocked: 0 },
      { time: minute + MINUTE, workspace_id: "ws_a", namespace_id: "ns_1", passed: 0, blocked: 1 },
      { time: minute, workspace_id: "ws_b", namespace_id: "ns_3", passed: 0, blocked: 1 },
    ]);
    expect(rowsOf("ratelimit_decisions_hour")).toEqual([
      { time: Date.UTC(2026, 2, 15, 12), workspace_id: "ws_a", namespace_id: "ns_1", passed: 5, blocked: 2 },
      { time: Date.UTC(2026, 2, 15, 12), workspace_id: "ws_a", namespace_id: "ns_2", passed: 1, blocked: 0 },
      { time: Date.UTC(2026, 2, 15, 12), workspace_id: "ws_b", namespace_id: "ns_3", passed: 0, blocked: 1 },
    ]);
    expect(rowsOf("ratelimit_decisions_day")).toContainEqual({ time: Date.UTC(2026, 2, 15), workspace_id: "ws_a", namespace_id: "ns_1", passed: 5, blocked: 2 });
    expect(rowsOf("ratelimit_decisions_month")).toContainEqual({ time: Date.UTC(2026, 2, 1), workspace_id: "ws_a", namespace_id: "ns_1", passed: 5, blocked: 2 });
  });

  test("a later flush adds to the rows already written", async () => {
    const decisions = new RatelimitDecisionAggregator({ writer: new SqliteEventWriter(db.storage) });
    decisions.record("ws_a", "ns_1", true, at);
    await decisions.flush();
    decisions.record("ws_a", "ns_1", true, at + 1);
    decisions.record("ws_a", "ns_1", false, at + 2);
    await decisions.flush();
    expect(rowsOf("ratelimit_decisions_minute")).toEqual([{ time: Date.UTC(2026, 2, 15, 12, 30), workspace_id: "ws_a", namespace_id: "ns_1", passed: 2, blocked: 1 }]);
  });

  test("a failed write keeps every count pending, added to those recorded since; the next flush writes them all", async () => {
    const writer = new FlakyWriter(1);
    const decisions = new RatelimitDecisionAggregator({ writer });
    decisions.record("ws_a", "ns_1", true, at);
    decisions.record("ws_a", "ns_1", false, at);
    await expect(decisions.flush()).rejects.toThrow("disk full");
    decisions.record("ws_a", "ns_1", true, at + 1);
    expect(decisions.pendingRows).toBe(1);
    expect(await decisions.flush()).toBe(1);
    expect(writer.written).toEqual([{ workspaceId: "ws_a", namespaceId: "ns_1", minuteMs: Date.UTC(2026, 2, 15, 12, 30), passed: 2, blocked: 1 }]);
    expect(decisions.takeDropped()).toBe(0);
  });

  test("bounded: past the cap of pending rows a new (namespace, minute) is not held, its decisions are counted as dropped; held rows still count", async () => {
    const writer = new FlakyWriter(0);
    const decisions = new RatelimitDecisionAggregator({ writer, maxPendingRows: 3 });
    for (let n = 0; n < 10; n++) decisions.record("ws_a", `ns_${n}`, true, at);
    decisions.record("ws_a", "ns_0", false, at);
    decisions.record("ws_a", "ns_0", true, at + MINUTE);
    expect(decisions.pendingRows).toBe(3);
    expect(decisions.takeDropped()).toBe(8);
    expect(decisions.takeDropped()).toBe(0);
    await decisions.flush();
    expect(writer.written.map((r) => [r.namespaceId, r.passed, r.blocked])).toEqual([["ns_0", 1, 1], ["ns_1", 1, 0], ["ns_2", 1, 0]]);
    // Room again once flushed.
    decisions.record("ws_a", "ns_9", true, at);
    expect(decisions.pendingRows).toBe(1);
  });

  test("the event sink's flush writes the decisions too, through the writer thread", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    const decisions = new RatelimitDecisionAggregator({ writer });
    const sink = new VerificationEventSink({ writer, decisions });
    decisions.record("ws_a", "ns_1", false, at);
    await sink.flush();
    expect(rowsOf("ratelimit_decisions_minute")).toEqual([{ time: Date.UTC(2026, 2, 15, 12, 30), workspace_id: "ws_a", namespace_id: "ns_1", passed: 0, blocked: 1 }]);
    decisions.record("ws_a", "ns_1", true, at);
    await sink.close();
    expect(rowsOf("ratelimit_decisions_day")).toEqual([{ time: Date.UTC(2026, 2, 15), workspace_id: "ws_a", namespace_id: "ns_1", passed: 1, blocked: 1 }]);
  });
});

test("retention: each decisions table keeps the days of its granularity's rollup", async () => {
  const now = Date.UTC(2026, 5, 15, 12);
  const decisions = new RatelimitDecisionAggregator({ writer: new SqliteEventWriter(db.storage) });
  for (const days of [0, 91, 366, 1200]) decisions.record("ws_a", "ns_1", true, now - days * DAY);
  await decisions.flush();
  const counts = await pruneAnalytics(db.storage, { raw: 90, minute: 90, hour: 90, day: 365, month: 1095 }, now);
  expect(counts.ratelimits).toEqual({ minute: 3, hour: 3, day: 2, month: 1 });
  expect(rowsOf("ratelimit_decisions_minute")).toHaveLength(1);
  expect(rowsOf("ratelimit_decisions_day")).toHaveLength(2);
});
