/**
 * Raw events stored as batch rows (raw-events.ts): one per workspace and minute, read back through
 * the `verification_events` view and `key_verifications_v1`, whose time ranges are confined to
 * the batches that can hold them (query/time-bounds.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { executeCompiled, openAnalyticsConnection, type Watchdog } from "../../../src/services/analytics/execute.ts";
import { compileAnalyticsQuery, initSqlParser } from "../../../src/services/analytics/query/compile.ts";
import { batchRows, EVENT_FIELDS, OPTIONAL_DEFAULTS } from "../../../src/services/analytics/raw-events.ts";
import { EventTables } from "../../../src/services/analytics/tables.ts";
import type { StoredEvent } from "../../../src/services/analytics/types.ts";
import { toStored } from "./support.ts";
import { event, tempDb, viewRow, VIEW_COLUMNS, type TempDb } from "./support.ts";
import { eventTablesBefore } from "../../storage/support.ts";

const MINUTE = 60_000;
const START = Date.UTC(2026, 5, 15, 12, 0, 0);

/** An event's fields as batchRows writes them: in EVENT_FIELDS' order, time from `minTime`, defaults left off from the end. */
function laidOut(e: StoredEvent, minTime: number): unknown[] {
  const byName: Record<(typeof EVENT_FIELDS)[number], unknown> = {
    time: e.timeMs - minTime, key_id: e.keyId, outcome: e.outcome, spent_credits: e.spentCredits, latency_ms: e.latencyMs,
    tags: e.tags, identity_id: e.identityId, external_id: e.externalId, request_id: e.requestId,
  };
  const fields = [...EVENT_FIELDS];
  const defaults: Record<string, string> = OPTIONAL_DEFAULTS;
  while (fields.length > 0 && byName[fields.at(-1)!] === defaults[fields.at(-1)!]) fields.pop();
  return fields.map((name) => byName[name]);
}

describe("batchRows", () => {
  test("one row per workspace, key space and UTC minute, each with its events in order, their bounds and count", () => {
    const at = (workspaceId: string, timeMs: number, keyId: string, keySpaceId = "ks_1") => toStored(event({ workspaceId, timeMs, keyId, keySpaceId }));
    const events = [
      at("ws_a", START + 59_000, "k1"), at("ws_b", START + 10, "k2"), at("ws_a", START + 1_000, "k3"),
      at("ws_a", START + MINUTE, "k4"), at("ws_a", START + 30_000, "k5"), at("ws_a", START + 20_000, "k6", "ks_2"), at("ws_a", START + 40_000, "k7"),
    ];
    const rows = batchRows(events).map((r) => ({ ...r, keys: (JSON.parse(r.events) as unknown[][]).map((e) => e[1]) }));
    expect(rows.map(({ events: _, ...r }) => r)).toEqual([
      { workspaceId: "ws_a", keySpaceId: "ks_1", minTime: START + 1_000, maxTime: START + 59_000, eventCount: 4, keys: ["k1", "k3", "k5", "k7"] },
      { workspaceId: "ws_b", keySpaceId: "ks_1", minTime: START + 10, maxTime: START + 10, eventCount: 1, keys: ["k2"] },
      { workspaceId: "ws_a", keySpaceId: "ks_1", minTime: START + MINUTE, maxTime: START + MINUTE, eventCount: 1, keys: ["k4"] },
      { workspaceId: "ws_a", keySpaceId: "ks_2", minTime: START + 20_000, maxTime: START + 20_000, eventCount: 1, keys: ["k6"] },
    ]);
  });

  test("each event is the JSON of its EVENT_FIELDS, its time from the row's least, the defaults at its end left off", () => {
    const tricky = ['"quoted"', "back\\slash", "new\nline\ttab\u0001", "ünï😀", "\ud800 lone", "</script>", ""];
    const events = tricky.flatMap((text, i) => [
      toStored(event({ requestId: `req_${text}`, keyId: `key_${i}`, identityId: text, externalId: text, tags: [text, "b"], timeMs: START + 50 - i, spentCredits: 1e12 + i, latencyMs: 0.1 + i / 3 })),
      // NaN, which JSON cannot hold, becomes null.
      toStored(event({ keyId: `key_${i}`, outcome: text, identityId: text, tags: [text], timeMs: START + i, latencyMs: Number.NaN })),
      // Each optional field the last one set, and none.
      toStored(event({ keyId: text, tags: [text], timeMs: START })),
      toStored(event({ keyId: text, identityId: `id_${text}`, timeMs: START })),
      toStored(event({ keyId: text, externalId: `ext_${text}`, timeMs: START })),
      toStored(event({ keyId: text, requestId: `req_${i}`, timeMs: START })),
      toStored(event({ keyId: text, timeMs: START })),
    ]);
    const [row, ...others] = batchRows(events);
    expect(others).toEqual([]);
    const minTime = Math.min(...events.map((e) => e.timeMs));
    expect(row!.minTime).toBe(minTime);
    const expected = events.map((e) => laidOut(e, minTime));
    expect(row!.events).toBe(JSON.stringify(expected));
    // Left off: a key with none of the optional fields set has five.
    expect(expected.at(-1)!.length).toBe(5);
    expect(new Set(expected.map((e) => e.length))).toEqual(new Set([5, 6, 7, 8, 9]));
  });
});

test("the writer stores each batch row's JSON as TEXT, byte for byte the text batchRows gives, several rows to a write", () => {
  const db = tempDb();
  try {
    const events = Array.from({ length: 400 }, (_, i) => toStored(event({
      workspaceId: i % 2 ? "ws_a" : "ws_b", timeMs: START + i * 300, keyId: `key_${i % 9}`, identityId: i % 3 ? "" : "id_ü😀", latencyMs: i / 7,
    })));
    new EventTables(db.storage).write(events);
    const stored = db.storage.sqlite.query<{ kind: string; events: string }, []>("SELECT typeof(events) AS kind, events FROM verification_event_batches ORDER BY id").all();
    expect(stored.length).toBeGreaterThanOrEqual(4);
    expect(stored.map((r) => r.kind)).toEqual(stored.map(() => "text"));
    expect(stored.map((r) => r.events)).toEqual(batchRows(events).map((r) => r.events));
  } finally {
    db.close();
  }
});

test("the view reads every field of each event, those left off as their defaults", () => {
  const db = tempDb();
  try {
    const events = [
      toStored(event({ requestId: "req_1", keyId: "key_1", identityId: "id_1", externalId: "ext_1", outcome: "DISABLED", tags: ["t"], timeMs: START, spentCredits: 7, latencyMs: 2.5 })),
      toStored(event({ keyId: "key_2", timeMs: START + 5, outcome: "VALID", latencyMs: 0.25 })),
      toStored(event({ keyId: "key_3", timeMs: START + 9, tags: ["a", "b"] })),
      toStored(event({ keyId: "key_4", timeMs: START + 3, externalId: "ext_4" })),
    ];
    new EventTables(db.storage).write(events);
    const lengths = (JSON.parse(batchRows(events)[0]!.events) as unknown[][]).map((e) => e.length);
    expect(lengths).toEqual([9, 5, 6, 8]);
    expect(viewRows(db.storage.sqlite)).toEqual(events.map(viewRow));
  } finally {
    db.close();
  }
});

function viewRows(sqlite: Database): unknown[] {
  return sqlite.query(`SELECT ${VIEW_COLUMNS} FROM verification_events ORDER BY batch_id, position`).all();
}

test("rows of the first layout, written before analytics.db's migration 0001, read alike beside the new ones, in the view and key_verifications_v1", async () => {
  await initSqlParser();
  const db = tempDb();
  try {
    const old = [
      toStored(event({ requestId: "req_old", keyId: "key_old", identityId: "id_o", externalId: "ext_o", tags: ["t"], timeMs: START + 1, spentCredits: 3, latencyMs: 1.5 })),
      toStored(event({ keyId: "key_old2", keySpaceId: "ks_other", outcome: "RATE_LIMITED", timeMs: START + 2 })),
    ];
    eventTablesBefore(db.storage).write(old);
    expect(db.storage.sqlite.query("SELECT layout, key_space_id FROM verification_event_batches").get()).toEqual({ layout: 1, key_space_id: "" });
    const newer = [toStored(event({ keyId: "key_new", timeMs: START + 3 })), toStored(event({ keyId: "key_new", keySpaceId: "ks_other", timeMs: START + 4 }))];
    new EventTables(db.storage).write(newer);
    expect(viewRows(db.storage.sqlite)).toEqual([...old, ...newer].map(viewRow));
    const conn = openAnalyticsConnection(db.storage.sqlite.filename, { deadlineMs: Number.MAX_SAFE_INTEGER, calls: 0, expired: false });
    try {
      const run = (sql: string, keySpaceIds: string[] | null) => executeCompiled(conn, { deadlineMs: Number.MAX_SAFE_INTEGER, calls: 0, expired: false },
        compileAnalyticsQuery(sql, { confinement: { workspaceId: old[0]!.workspaceId, keySpaceIds }, nowMs: START + MINUTE, maxRows: 100 }),
        { maxRows: 100, maxBytes: 1024 * 1024, timeoutMs: 5000 });
      expect(run("SELECT key_id, outcome, spent_credits FROM key_verifications_v1 WHERE time >= now() - INTERVAL 1 MINUTE ORDER BY time", null)).toEqual([
        { key_id: "key_old", outcome: "VALID", spent_credits: 3 }, { key_id: "key_old2", outcome: "RATE_LIMITED", spent_credits: 0 },
        { key_id: "key_new", outcome: "VALID", spent_credits: 0 }, { key_id: "key_new", outcome: "VALID", spent_credits: 0 },
      ]);
      expect(run("SELECT key_id, time FROM key_verifications_v1 ORDER BY time", ["ks_other"])).toEqual([
        { key_id: "key_old2", time: START + 2 }, { key_id: "key_new", time: START + 4 },
      ]);
    } finally {
      conn.close();
    }
  } finally {
    db.close();
  }
});

describe("key_verifications_v1 over batch rows", () => {
  let db: TempDb;
  let conn: Database;
  const watchdog: Watchdog = { deadlineMs: Number.MAX_SAFE_INTEGER, calls: 0, expired: false };
  /** 1,800 events of ws_a, one every 100 ms from START, over two key spaces; and some of ws_b at the same times. */
  const events: StoredEvent[] = Array.from({ length: 1800 }, (_, i) => toStored(event({
    timeMs: START + i * 100, keyId: `key_${i % 7}`, keySpaceId: i % 3 === 0 ? "ks_b" : "ks_a", outcome: i % 5 === 0 ? "RATE_LIMITED" : "VALID",
  })));
  const foreign = Array.from({ length: 300 }, (_, i) => toStored(event({ workspaceId: "ws_b", timeMs: START + i * 600 })));

  beforeAll(async () => {
    await initSqlParser();
    db = tempDb();
    // In chunks of 250 as the writer thread cuts them: batch rows that straddle every bound below.
    const tables = new EventTables(db.storage);
    const all = [...events, ...foreign];
    for (let i = 0; i < all.length; i += 250) tables.write(all.slice(i, i + 250));
    conn = openAnalyticsConnection(db.storage.sqlite.filename, watchdog);
  });
  afterAll(() => { conn.close(); db.close(); });

  const run = (sql: string, keySpaceIds: string[] | null = null) => {
    const compiled = compileAnalyticsQuery(sql, { confinement: { workspaceId: "ws_a", keySpaceIds }, nowMs: START + 3 * MINUTE, maxRows: 10_000 });
    return executeCompiled(conn, watchdog, compiled, { maxRows: 10_000, maxBytes: 4 * 1024 * 1024, timeoutMs: 5000 });
  };
  const countOf = (sql: string, keySpaceIds: string[] | null = null) => (run(sql, keySpaceIds)[0] as { n: number }).n;

  test("the rows are spread over batch rows that straddle minutes' middles", () => {
    const batches = db.storage.sqlite.query<{ n: number; spans: number }, []>(
      "SELECT count(*) AS n, sum(max_time - min_time > 0) AS spans FROM verification_event_batches WHERE workspace_id = 'ws_a'").get()!;
    expect(batches.n).toBeGreaterThanOrEqual(8);
    expect(batches.spans).toBe(batches.n);
    expect(countOf("SELECT count() AS n FROM key_verifications_v1")).toBe(1800);
  });

  test("every time range returns exactly its events, whatever batch rows it cuts through", () => {
    const bounds = [START - 1, START, START + 1, START + 12_345, START + 25_000, START + MINUTE - 50, START + MINUTE, START + 100_050, START + 179_900, START + 179_901, START + 200_000];
    for (const lo of bounds) {
      for (const hi of bounds) {
        const expected = events.filter((e) => e.timeMs >= lo && e.timeMs < hi).length;
        expect({ lo, hi, n: countOf(`SELECT count() AS n FROM key_verifications_v1 WHERE time >= ${lo} AND time < ${hi}`) }).toEqual({ lo, hi, n: expected });
        const between = events.filter((e) => e.timeMs >= lo && e.timeMs <= hi).length;
        expect({ lo, hi, n: countOf(`SELECT count() AS n FROM key_verifications_v1 WHERE ${hi} >= time AND time BETWEEN ${lo} AND ${hi}`) }).toEqual({ lo, hi, n: between });
      }
    }
  });

  test("relative to now(), grouped, and for a caller confined to a key space", () => {
    const since = START + 3 * MINUTE - 100_000;
    const recent = events.filter((e) => e.timeMs > since);
    expect(run("SELECT outcome, count() AS n FROM key_verifications_v1 WHERE time > now() - INTERVAL 100 SECOND GROUP BY outcome ORDER BY outcome")).toEqual([
      { outcome: "RATE_LIMITED", n: recent.filter((e) => e.outcome === "RATE_LIMITED").length },
      { outcome: "VALID", n: recent.filter((e) => e.outcome === "VALID").length },
    ]);
    expect(countOf("SELECT count() AS n FROM key_verifications_v1 WHERE time > now() - INTERVAL 100 SECOND", ["ks_b"]))
      .toBe(recent.filter((e) => e.keySpaceId === "ks_b").length);
  });

  test("every field reads back as written", () => {
    const rows = run("SELECT request_id, time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, spent_credits, latency FROM key_verifications_v1 WHERE time < " + (START + 1000) + " ORDER BY time");
    expect(rows).toEqual(events.slice(0, 10).map((e) => ({
      request_id: e.requestId, time: e.timeMs, workspace_id: e.workspaceId, key_space_id: e.keySpaceId, key_id: e.keyId, identity_id: e.identityId,
      external_id: e.externalId, outcome: e.outcome, tags: e.tags, spent_credits: e.spentCredits, latency: e.latencyMs,
    })));
  });
});
