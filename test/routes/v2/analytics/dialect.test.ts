/**
 * The ClickHouse subset upstream documents, over events written by the real pipeline (sink →
 * writer thread → raw table and four rollups): every function, INTERVAL unit and clause of the
 * dialect, each with the exact numbers a reader can check against the seven events below.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { TEST_ACTOR, createApi } from "../../../support/contract.ts";
import { event } from "../../../services/analytics/support.ts";
import { keySpaceOf, runQuery } from "./support.ts";
import { flushAnalytics } from "./store.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Sunday 15 March 2026, 12:00 UTC. */
const NOW = Date.UTC(2026, 2, 15, 12);

const RAW = "key_verifications_v1";
const TABLES = [RAW, "key_verifications_per_minute_v1", "key_verifications_per_hour_v1", "key_verifications_per_day_v1", "key_verifications_per_month_v1"];

let h: Harness;
let ks1 = "";
let ks2 = "";

/**
 * E1, E2: 10 min ago, key_a (alice), VALID, 1 credit each, latency 2 and 4
 * E3: 50 min ago, key_b (bob), RATE_LIMITED, latency 6
 * E4: 3 h ago, key_b (bob), VALID, latency 8
 * E5: 2 days ago, key_a (alice), USAGE_EXCEEDED, latency 10
 * E6: 10 days ago, key_c (no identity, the second API), VALID, latency 12
 * E7: 40 days ago, key_a (alice), VALID, latency 14
 */
beforeAll(async () => {
  h = await startHarness({ startMs: NOW });
  await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  ks1 = await keySpaceOf(h, await createApi(h, "dialect-1"));
  ks2 = await keySpaceOf(h, await createApi(h, "dialect-2"));
  const workspaceId = (await h.running.services.workspaces.get("default")).id;
  const alice = { keyId: "key_a", identityId: "id_alice", externalId: "alice" };
  const bob = { keyId: "key_b", identityId: "id_bob", externalId: "bob" };
  const events = [
    { ...alice, agoMs: 10 * MIN, outcome: "VALID", latencyMs: 2, spentCredits: 1 },
    { ...alice, agoMs: 10 * MIN, outcome: "VALID", latencyMs: 4, spentCredits: 1 },
    { ...bob, agoMs: 50 * MIN, outcome: "RATE_LIMITED", latencyMs: 6 },
    { ...bob, agoMs: 3 * HOUR, outcome: "VALID", latencyMs: 8 },
    { ...alice, agoMs: 2 * DAY, outcome: "USAGE_EXCEEDED", latencyMs: 10 },
    { keyId: "key_c", identityId: "", externalId: "", agoMs: 10 * DAY, outcome: "VALID", latencyMs: 12, keySpaceId: ks2 },
    { ...alice, agoMs: 40 * DAY, outcome: "VALID", latencyMs: 14, tags: ["path=/b", "path=/a"] },
  ];
  const sink = h.running.services.verificationEvents;
  for (const { agoMs, ...e } of events) {
    sink.record(event({ workspaceId, keySpaceId: ks1, ...e, timeMs: NOW - agoMs }));
  }
  await flushAnalytics(h);
});
afterAll(async () => { await h.stop(); });

const rows = async (query: string) => {
  const res = await runQuery(h, query);
  if (res.status !== 200) throw new Error(`${query}\n→ ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data as Array<Record<string, unknown>>;
};

describe("every table", () => {
  test.each(TABLES)("%s: the same total and the same count per outcome", async (table) => {
    const n = table === RAW ? "count()" : "SUM(count)";
    expect(await rows(`SELECT ${n} AS n FROM ${table}`)).toEqual([{ n: 7 }]);
    expect(await rows(`SELECT outcome, ${n} AS n FROM ${table} GROUP BY outcome ORDER BY outcome`)).toEqual([
      { outcome: "RATE_LIMITED", n: 1 }, { outcome: "USAGE_EXCEEDED", n: 1 }, { outcome: "VALID", n: 5 },
    ]);
  });

  test("the raw table: upstream's columns", async () => {
    expect(await rows(`SELECT * FROM ${RAW} WHERE time = ${NOW - 40 * DAY}`)).toEqual([{
      request_id: "", time: NOW - 40 * DAY, workspace_id: expect.stringMatching(/^ws_/), key_space_id: ks1, identity_id: "id_alice",
      external_id: "alice", key_id: "key_a", region: "local", source: "api", outcome: "VALID", tags: '["path=/a","path=/b"]', spent_credits: 0, latency: 14,
    }]);
  });

  test("a rollup: the bucket start as time, count, credits and average latency", async () => {
    expect(await rows(`SELECT * FROM key_verifications_per_hour_v1 WHERE key_id = 'key_a' AND time = ${NOW - HOUR}`)).toEqual([{
      time: NOW - HOUR, workspace_id: expect.stringMatching(/^ws_/), key_space_id: ks1, identity_id: "id_alice", external_id: "alice",
      key_id: "key_a", source: "api", outcome: "VALID", tags: "[]", count: 2, spent_credits: 2, latency_avg: 3,
    }]);
  });
});

describe("aggregates", () => {
  test("SUM and sumIf(count, outcome = 'VALID')", async () => {
    expect(await rows("SELECT SUM(count) AS total, sumIf(count, outcome = 'VALID') AS valid, SUM(spent_credits) AS credits FROM key_verifications_per_day_v1"))
      .toEqual([{ total: 7, valid: 5, credits: 2 }]);
  });

  test("count, countIf, uniq", async () => {
    expect(await rows(`SELECT count() AS n, count(*) AS star, countIf(outcome = 'VALID') AS valid, uniq(key_id) AS keys, uniq(external_id) AS owners FROM ${RAW}`))
      .toEqual([{ n: 7, star: 7, valid: 5, keys: 3, owners: 3 }]);
  });

  test("avg, min, max and round", async () => {
    expect(await rows(`SELECT avg(latency) AS avg, min(latency) AS min, max(latency) AS max, round(avg(latency) / 3, 2) AS third FROM ${RAW}`))
      .toEqual([{ avg: 8, min: 2, max: 14, third: 2.67 }]);
    expect(await rows("SELECT round(SUM(latency_avg * count) / SUM(count), 1) AS avg FROM key_verifications_per_hour_v1")).toEqual([{ avg: 8 }]);
  });

  test("if", async () => {
    expect(await rows(`SELECT if(outcome = 'VALID', 'ok', 'not ok') AS kind, count() AS n FROM ${RAW} GROUP BY kind ORDER BY kind`))
      .toEqual([{ kind: "not ok", n: 2 }, { kind: "ok", n: 5 }]);
  });
});

describe("time", () => {
  test("now() - INTERVAL n MINUTE | HOUR | DAY | WEEK | MONTH", async () => {
    const windows = ["30 MINUTE", "1 HOUR", "1 DAY", "7 DAY", "2 WEEK", "1 MONTH"];
    const select = windows.map((w, i) => `countIf(time >= now() - INTERVAL ${w}) AS w${i}`).join(", ");
    expect(await rows(`SELECT ${select} FROM ${RAW}`)).toEqual([{ w0: 2, w1: 3, w2: 4, w3: 5, w4: 6, w5: 6 }]);
  });

  test("the spec's example: SUM(count) WHERE time > now() - INTERVAL 7 DAY", async () => {
    expect(await rows("SELECT SUM(count) FROM key_verifications_per_day_v1 WHERE time > now() - INTERVAL 7 DAY")).toEqual([{ "SUM(count)": 5 }]);
  });

  test("today(), toDate and toStartOfDay", async () => {
    expect(await rows(`SELECT today() AS t, toDate('2026-03-14') AS d, toDate(time) AS day FROM ${RAW} WHERE time = ${NOW - 2 * DAY}`))
      .toEqual([{ t: Date.UTC(2026, 2, 15), d: Date.UTC(2026, 2, 14), day: Date.UTC(2026, 2, 13) }]);
    expect(await rows("SELECT SUM(count) AS n FROM key_verifications_per_day_v1 WHERE time >= today() - INTERVAL 2 DAY")).toEqual([{ n: 5 }]);
  });

  test("toStartOfHour over raw events equals the hourly rollup", async () => {
    const fromRaw = await rows(`SELECT toStartOfHour(time) AS t, count() AS n FROM ${RAW} GROUP BY t ORDER BY t`);
    expect(fromRaw).toEqual(await rows("SELECT time AS t, SUM(count) AS n FROM key_verifications_per_hour_v1 GROUP BY time ORDER BY time"));
    expect(fromRaw.slice(-2)).toEqual([{ t: NOW - 3 * HOUR, n: 1 }, { t: NOW - HOUR, n: 3 }]);
  });

  test("toStartOfDay and toStartOfMonth over raw events equal the daily and monthly rollups", async () => {
    for (const [fn, table] of [["toStartOfDay", "per_day"], ["toStartOfMonth", "per_month"]]) {
      const fromRaw = await rows(`SELECT ${fn}(time) AS t, count() AS n FROM ${RAW} GROUP BY t ORDER BY t`);
      expect(fromRaw).toEqual(await rows(`SELECT time AS t, SUM(count) AS n FROM key_verifications_${table}_v1 GROUP BY time ORDER BY time`));
    }
    expect(await rows("SELECT time, SUM(count) AS n FROM key_verifications_per_month_v1 GROUP BY time ORDER BY time"))
      .toEqual([{ time: Date.UTC(2026, 1, 1), n: 1 }, { time: Date.UTC(2026, 2, 1), n: 6 }]);
  });

  test("toStartOfWeek: weeks start on Sunday, as in ClickHouse", async () => {
    expect(await rows(`SELECT toStartOfWeek(time) AS week, count() AS n FROM ${RAW} GROUP BY week ORDER BY week`)).toEqual([
      { week: Date.UTC(2026, 1, 1), n: 1 }, { week: Date.UTC(2026, 2, 1), n: 1 }, { week: Date.UTC(2026, 2, 8), n: 1 }, { week: Date.UTC(2026, 2, 15), n: 4 },
    ]);
  });
});

describe("clauses", () => {
  test("GROUP BY external_id, ORDER BY, LIMIT", async () => {
    expect(await rows("SELECT external_id, SUM(count) AS total FROM key_verifications_per_day_v1 GROUP BY external_id ORDER BY total DESC, external_id LIMIT 2"))
      .toEqual([{ external_id: "alice", total: 4 }, { external_id: "bob", total: 2 }]);
  });

  test("HAVING", async () => {
    expect(await rows("SELECT key_id, SUM(count) AS n FROM key_verifications_per_minute_v1 GROUP BY key_id HAVING SUM(count) >= 2 ORDER BY key_id"))
      .toEqual([{ key_id: "key_a", n: 4 }, { key_id: "key_b", n: 2 }]);
  });

  test("aliases of tables and columns, a CTE and a subquery", async () => {
    const query = `WITH recent AS (SELECT key_id, count FROM key_verifications_per_day_v1 AS d WHERE d.time >= today() - INTERVAL 7 DAY)
      SELECT k, n FROM (SELECT r.key_id AS k, SUM(r.count) AS n FROM recent AS r GROUP BY r.key_id) AS totals ORDER BY n DESC`;
    expect(await rows(query)).toEqual([{ k: "key_a", n: 3 }, { k: "key_b", n: 2 }]);
  });

  test("a scalar subquery, IN (subquery) and a join between two tables", async () => {
    expect(await rows(`SELECT count() AS n, (SELECT SUM(count) FROM key_verifications_per_month_v1) AS total FROM ${RAW}
      WHERE key_id IN (SELECT key_id FROM key_verifications_per_day_v1 WHERE outcome = 'RATE_LIMITED')`)).toEqual([{ n: 2, total: 7 }]);
    expect(await rows(`SELECT m.key_id, SUM(m.count) AS n FROM key_verifications_per_month_v1 AS m JOIN (SELECT DISTINCT key_id FROM ${RAW} WHERE key_space_id = '${ks2}') AS c ON c.key_id = m.key_id GROUP BY m.key_id`))
      .toEqual([{ key_id: "key_c", n: 1 }]);
  });

  test("positions in GROUP BY and ORDER BY name the SELECT's columns", async () => {
    expect(await rows("SELECT external_id, SUM(count) AS total FROM key_verifications_per_day_v1 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 2"))
      .toEqual([{ external_id: "alice", total: 4 }, { external_id: "bob", total: 2 }]);
    expect(await rows(`SELECT key_id, outcome, count() AS n FROM ${RAW} GROUP BY 1, 2 ORDER BY 1, 2`)).toEqual([
      { key_id: "key_a", outcome: "USAGE_EXCEEDED", n: 1 }, { key_id: "key_a", outcome: "VALID", n: 3 },
      { key_id: "key_b", outcome: "RATE_LIMITED", n: 1 }, { key_id: "key_b", outcome: "VALID", n: 1 }, { key_id: "key_c", outcome: "VALID", n: 1 },
    ]);
  });

  test("a position past the SELECT's columns is refused with 400", async () => {
    for (const query of [`SELECT key_id, count() AS n FROM ${RAW} GROUP BY 3`, `SELECT key_id FROM ${RAW} ORDER BY 2`]) {
      const res = await runQuery(h, query);
      expect({ query, status: res.status, type: res.body.error?.type }).toEqual({ query, status: 400, type: expect.stringContaining("invalid_analytics_query") });
    }
  });

  test("function names are case-insensitive", async () => {
    expect(await rows(`SELECT COUNTIF(outcome = 'VALID') AS a, SUMIF(spent_credits, 1 = 1) AS b, TOSTARTOFDAY(${NOW + 5}) AS c FROM ${RAW}`))
      .toEqual([{ a: 5, b: 2, c: Date.UTC(2026, 2, 15) }]);
  });
});

describe("totals: a query served from a rollup's totals gives the rollup's answer", () => {
  // `{where}` is `1 = 1` (read from the totals) or `key_id <> ''` (the same rows, but naming a
  // column only the rollup has, so it reads the rollup).
  test.each([
    "SELECT time, SUM(count) AS total, sumIf(count, outcome = 'VALID') AS valid FROM key_verifications_per_day_v1 WHERE {where} GROUP BY time ORDER BY time",
    "SELECT outcome, SUM(count) AS n, SUM(spent_credits) AS credits FROM key_verifications_per_hour_v1 WHERE {where} GROUP BY outcome ORDER BY outcome",
    "SELECT key_space_id, toStartOfMonth(time) AS m, SUM(count) AS n FROM key_verifications_per_minute_v1 WHERE {where} GROUP BY key_space_id, m ORDER BY key_space_id, m",
    "SELECT min(time) AS first, max(time) AS last, uniq(outcome) AS outcomes, count(DISTINCT key_space_id) AS apis FROM key_verifications_per_month_v1 WHERE {where}",
    "SELECT DISTINCT outcome FROM key_verifications_per_day_v1 WHERE {where} ORDER BY outcome",
    "SELECT time FROM key_verifications_per_hour_v1 WHERE {where} GROUP BY time HAVING SUM(count) >= 2 ORDER BY time",
    "WITH d AS (SELECT time, SUM(count) AS n FROM key_verifications_per_day_v1 WHERE {where} GROUP BY time) SELECT max(n) AS peak, SUM(n) AS total FROM d",
  ])("%s", async (query) => {
    const fromTotals = await rows(query.replace("{where}", "1 = 1"));
    expect(fromTotals.length).toBeGreaterThan(0);
    expect(fromTotals).toEqual(await rows(query.replace("{where}", "key_id <> ''")));
  });
});
