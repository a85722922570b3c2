/**
 * The two dialects of the analytics translator give the same answers: the same events in
 * analytics.db (SQLite, written by the event writer) and in schema `analytics` (PostgreSQL), and
 * every query below answered alike by both, row for row and value for value. The corners where
 * the engines differ by themselves are the point: calendar shifts past a month's end, time
 * functions, LIKE's case and escapes, NULL order, division and remainders by zero, integer
 * overflow, conditions that are numbers and comparisons that are selected, names in any case,
 * long column names, and aliases where PostgreSQL would not look for them.
 * (The route tests run the whole dialect on both backends: test/routes/v2/analytics.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { executeCompiled, openAnalyticsConnection, type Watchdog } from "../../src/services/analytics/execute.ts";
import { executeCompiledPg, openPgAnalyticsConnection } from "../../src/services/analytics/execute-pg.ts";
import { compileAnalyticsQuery, initSqlParser, POSTGRES, SQLITE, type Dialect } from "../../src/services/analytics/query/compile.ts";
import { SqliteEventWriter } from "../../src/services/analytics/index.ts";
import { event, packEvents, tempDb, type TempDb } from "../services/analytics/support.ts";
import { postgresForFile } from "./pg-database.ts";
import { missing, skipWithout } from "../support/tools.ts";

const NOW = Date.UTC(2026, 2, 15, 12);
const EVENTS = [
  event({ timeMs: Date.UTC(2026, 0, 31, 10), keyId: "key_a", outcome: "VALID", spentCredits: 3, latencyMs: 2.5, tags: ["b", "a"] }),
  event({ timeMs: Date.UTC(2024, 1, 29, 12), keyId: "KEY_B", outcome: "RATE_LIMITED", latencyMs: 4 }),
  event({ timeMs: Date.UTC(2026, 2, 15, 11, 30, 15, 500), keyId: "key_a", outcome: "VALID", spentCredits: 1, latencyMs: 0, identityId: "id_1" }),
  event({ timeMs: Date.UTC(2025, 11, 31, 23, 59, 59, 999), keyId: "key_c", outcome: "USAGE_EXCEEDED", latencyMs: 7 }),
  event({ timeMs: Date.UTC(2026, 2, 1), keyId: "key_%", outcome: "VALID", spentCredits: 5, latencyMs: 1 }),
];
const RAW = "key_verifications_v1";

const QUERIES = [
  `SELECT time + INTERVAL 1 MONTH AS m, time - INTERVAL 1 QUARTER AS q, time + INTERVAL 1 YEAR AS y, time - INTERVAL 13 MONTH AS back FROM ${RAW} ORDER BY time`,
  `SELECT (time - INTERVAL 1 MONTH) + INTERVAL 1 MONTH AS there_and_back, INTERVAL 2 MONTH + time AS ahead FROM ${RAW} ORDER BY time`,
  `SELECT count() AS n FROM ${RAW} WHERE time > now() - INTERVAL 1 MONTH`,
  `SELECT toStartOfMonth(time) AS m, toStartOfYear(time) AS y, toStartOfWeek(time) AS w, toStartOfMinute(time) AS mi, toStartOfHour(time) AS h, toDate(time) AS d FROM ${RAW} ORDER BY time`,
  `SELECT toDate('2026-01-31') AS d, toDate('2026-01-31 10:00:00') AS dt, today() AS t, now() AS n FROM ${RAW} LIMIT 1`,
  `SELECT key_id FROM ${RAW} WHERE key_id LIKE 'KEY_%' ORDER BY key_id`,
  `SELECT key_id, key_id LIKE 'key\\_%' AS escaped, key_id NOT LIKE '%b' AS not_b FROM ${RAW} ORDER BY time`,
  `SELECT CASE WHEN outcome = 'VALID' THEN key_id END AS k, count() AS n FROM ${RAW} GROUP BY k ORDER BY k`,
  `SELECT CASE WHEN outcome = 'VALID' THEN key_id END AS k FROM ${RAW} ORDER BY k DESC, time`,
  `SELECT spent_credits / 0 AS a, spent_credits % 3 AS b, latency % 2 AS c, 86400000 * 30 AS big, 7 / 2 AS half, spent_credits % 0 AS z FROM ${RAW} ORDER BY time`,
  `SELECT count() AS n FROM ${RAW} WHERE 0`,
  `SELECT count() AS n FROM ${RAW} WHERE 1 AND latency`,
  `SELECT count() AS n FROM ${RAW} WHERE NOT 0 AND (spent_credits OR false)`,
  `SELECT outcome = 'VALID' AS ok, NOT (outcome = 'VALID') AS bad, (outcome = 'VALID') + 1 AS two, true AS t, false AS f, 0 AS zero FROM ${RAW} ORDER BY time`,
  `SELECT sumIf(spent_credits, 1) AS s, countIf(latency) AS c, if(0, 'a', 'b') AS i, countIf(outcome = 'VALID' AND latency > 0) AS v FROM ${RAW}`,
  `SELECT key_id FROM ${RAW} ORDER BY time LIMIT 2 OFFSET 1`,
  `SELECT round(avg(latency), 1) AS a, round(SUM(latency) / 3) AS b, abs(-3) AS c, lower(outcome) AS lo, length(outcome) AS len, coalesce(NULL, 5) AS co FROM ${RAW} GROUP BY outcome ORDER BY outcome`,
  `SELECT upper(key_id) AS up, abs(latency - 5) AS d FROM ${RAW} ORDER BY time`,
  `SELECT uniq(tags) AS u, max(tags) AS mx, min(key_id) AS mn, uniqExact(outcome) AS o, count(DISTINCT key_id) AS k FROM ${RAW}`,
  `SELECT time BETWEEN 0 AND now() AS b, key_id IN ('key_a', 'key_c') AS i, identity_id IS NULL AS n, identity_id = '' AS e FROM ${RAW} ORDER BY time`,
  `SELECT key_id, count() AS n FROM ${RAW} GROUP BY key_id HAVING count() > 1 ORDER BY n DESC, key_id`,
  `SELECT a.key_id, count() AS n FROM ${RAW} AS a JOIN ${RAW} AS b USING (key_id) GROUP BY a.key_id ORDER BY a.key_id`,
  `SELECT a.time AS t, b.time AS u FROM ${RAW} AS a LEFT JOIN ${RAW} AS b ON b.time > a.time AND b.outcome = 'RATE_LIMITED' ORDER BY a.time`,
  `SELECT a.time AS t, b.time AS u FROM ${RAW} AS a LEFT JOIN ${RAW} AS b ON b.time > a.time AND b.outcome = 'RATE_LIMITED' ORDER BY u DESC, b.time, t`,
  `SELECT key_id FROM ${RAW} WHERE outcome = 'VALID' EXCEPT SELECT key_id FROM ${RAW} WHERE outcome <> 'VALID' ORDER BY key_id`,
  `SELECT key_id FROM ${RAW} WHERE latency > 3 UNION ALL SELECT key_id FROM ${RAW} INTERSECT SELECT key_id FROM ${RAW} WHERE spent_credits >= 0 ORDER BY key_id`,
  `SELECT key_id FROM ${RAW} INTERSECT SELECT key_id FROM ${RAW} WHERE spent_credits > 0 UNION ALL SELECT outcome FROM ${RAW} WHERE latency > 5 ORDER BY key_id`,
  `SELECT -time AS neg, - - 1 AS pos, 1.5 * spent_credits AS x, spent_credits * 2 AS y, latency * 1e20 AS huge FROM ${RAW} ORDER BY time`,
  `WITH v AS (SELECT key_id, SUM(spent_credits) AS s FROM ${RAW} GROUP BY key_id) SELECT key_id, s, s > 2 AS rich FROM v WHERE s >= 0 ORDER BY s DESC, key_id`,
  `SELECT key_id, (SELECT count() FROM ${RAW} AS i WHERE i.key_id = o.key_id) AS same FROM ${RAW} AS o WHERE EXISTS (SELECT 1 FROM ${RAW} AS x WHERE x.time < o.time) ORDER BY time`,
  `SELECT * FROM ${RAW} ORDER BY time LIMIT 2`,
  `SELECT DISTINCT outcome FROM ${RAW} ORDER BY outcome DESC`,
  // Names in any ASCII case, the caller's column names kept, also past PostgreSQL's 63 bytes.
  `SELECT Key_ID AS KeyId, COUNT() AS N FROM ${RAW} AS V WHERE v.OUTCOME = 'VALID' GROUP BY V.key_id ORDER BY n DESC, KEYID`,
  `SELECT countIf(outcome = 'VALID' AND latency > 0 AND spent_credits >= 0 AND key_id <> 'nothing at all'), count() FROM ${RAW}`,
  // A SELECT's aliases in its WHERE and HAVING; the same expression with strings in SELECT and GROUP BY.
  `SELECT key_id, SUM(spent_credits) AS total FROM ${RAW} GROUP BY key_id HAVING total > 1 ORDER BY key_id`,
  `SELECT latency * 2 AS doubled, key_id FROM ${RAW} WHERE doubled > 4 ORDER BY key_id`,
  `SELECT if(outcome = 'VALID', 'ok', 'no') AS kind, count() AS n FROM ${RAW} GROUP BY if(outcome = 'VALID', 'ok', 'no') ORDER BY kind`,
  `SELECT toDate('2026-03-01') AS d, count() AS n FROM ${RAW} WHERE outcome <> '2026-03-01' GROUP BY d`,
  // Positions in GROUP BY and ORDER BY, as SQLite and ClickHouse read them; NULLs first as in SQLite.
  `SELECT outcome, count() AS n FROM ${RAW} GROUP BY 1 ORDER BY 1`,
  `SELECT key_id, outcome, SUM(spent_credits) AS s FROM ${RAW} GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2`,
  `SELECT identity_id, count() AS n FROM ${RAW} GROUP BY 1 ORDER BY 1`,
  `SELECT CASE WHEN outcome = 'VALID' THEN key_id END AS k, time FROM ${RAW} ORDER BY 1 DESC, 2`,
  `SELECT toStartOfMonth(time) AS m, count() AS n FROM ${RAW} GROUP BY 1 ORDER BY 2 DESC, 1 NULLS LAST`,
  `SELECT key_id FROM ${RAW} WHERE latency > 3 UNION ALL SELECT outcome FROM ${RAW} ORDER BY 1`,
];

describe.skipIf(skipWithout(missing.postgres(), "the PostgreSQL analytics dialect"))("the same answers from SQLite and PostgreSQL", () => {
  let db: TempDb;
  let sqlite: Database;
  let pgConn: SQL;
  const pg = postgresForFile(async () => { await pgConn?.close(); });
  const watchdog: Watchdog = { deadlineMs: 0, calls: 0, expired: false };
  const limits = { maxRows: 100, maxBytes: 1024 * 1024, timeoutMs: 5000 };

  beforeAll(async () => {
    await initSqlParser();
    db = tempDb();
    await new SqliteEventWriter(db.storage).write(packEvents(EVENTS));
    sqlite = openAnalyticsConnection(db.storage.sqlite.filename, watchdog);
    const url = await pg.freshDatabase();
    const admin = pg.client(url);
    for (const e of EVENTS) {
      await admin`INSERT INTO analytics.verification_events (time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, spent_credits, latency_ms)
        VALUES (${e.timeMs}, ${e.workspaceId}, ${e.keySpaceId}, ${e.keyId}, ${e.identityId}, ${e.externalId}, ${e.outcome}, ${JSON.stringify([...e.tags].sort())}, ${e.spentCredits}, ${e.latencyMs})`;
    }
    pgConn = openPgAnalyticsConnection(url);
  });
  afterAll(() => {
    sqlite.close();
    db.close();
  });

  const compile = (query: string, dialect: Dialect) =>
    compileAnalyticsQuery(query, { confinement: { workspaceId: "ws_a", keySpaceIds: null }, nowMs: NOW, maxRows: limits.maxRows, dialect });

  test.each(QUERIES)("%s", async (query) => {
    watchdog.deadlineMs = Date.now() + limits.timeoutMs;
    const fromSqlite = executeCompiled(sqlite, watchdog, compile(query, SQLITE), limits);
    expect(fromSqlite.length).toBeGreaterThan(0);
    const fromPostgres = await executeCompiledPg(pgConn, compile(query, POSTGRES), { ...limits, deadlineMs: Date.now() + limits.timeoutMs });
    expect(fromPostgres).toEqual(fromSqlite);
  });
});
