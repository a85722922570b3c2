/** The analytics connection and the executor: read-only, row and size limits, and the deadline enforced from inside SQLite's loops. */
import { afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { AppError } from "../../../src/errors/app-error.ts";
import { executeCompiled, openAnalyticsConnection, type Watchdog } from "../../../src/services/analytics/execute.ts";
import { compileAnalyticsQuery, initSqlParser } from "../../../src/services/analytics/query/compile.ts";
import { SqliteEventWriter } from "../../../src/services/analytics/index.ts";
import { event, tempDb, type TempDb } from "./support.ts";
import { packEvents } from "./support.ts";

let db: TempDb;
let conn: Database;
let watchdog: Watchdog;
beforeAll(async () => { await initSqlParser(); });
beforeEach(async () => {
  db = tempDb();
  await new SqliteEventWriter(db.storage).write(packEvents(Array.from({ length: 300 }, (_, i) => event({ keyId: `key_${i}`, timeMs: event().timeMs + i }))));
  watchdog = { deadlineMs: 0, calls: 0, expired: false };
  conn = openAnalyticsConnection(db.storage.sqlite.filename, watchdog);
});
afterEach(() => {
  conn.close();
  db.close();
});

const LIMITS = { maxRows: 10_000, maxBytes: 4 * 1024 * 1024, timeoutMs: 5000 };
const run = (sql: string, limits = LIMITS) => {
  const compiled = compileAnalyticsQuery(sql, { confinement: { workspaceId: "ws_a", keySpaceIds: null }, nowMs: event().timeMs, maxRows: limits.maxRows });
  return executeCompiled(conn, watchdog, compiled, limits);
};
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof AppError ? e.code : String(e);
  }
  return "no error";
};

describe("the connection", () => {
  test("is read-only: SQLite refuses every write on it, whatever the SQL", () => {
    expect(() => conn.run("DELETE FROM verification_event_batches")).toThrow(/readonly|read-only/i);
    expect(() => conn.run("CREATE TABLE stolen (x)")).toThrow(/readonly|read-only/i);
    expect(conn.query("PRAGMA query_only").get()).toEqual({ query_only: 1 });
    expect(db.storage.sqlite.query("SELECT count(*) AS n FROM verification_events").get()).toEqual({ n: 300 });
  });
});

describe("executeCompiled", () => {
  test("rows as selected, confined to the workspace", () => {
    watchdog.deadlineMs = Date.now() + 5000;
    expect(run("SELECT count() AS n, uniq(key_id) AS k FROM key_verifications_v1")).toEqual([{ n: 300, k: 300 }]);
  });

  test("at most maxRows rows", () => {
    watchdog.deadlineMs = Date.now() + 5000;
    expect(run("SELECT key_id FROM key_verifications_v1", { ...LIMITS, maxRows: 7 })).toHaveLength(7);
  });

  test("a result over maxBytes is 422 query_memory_limit_exceeded", () => {
    watchdog.deadlineMs = Date.now() + 5000;
    expect(codeOf(() => run("SELECT * FROM key_verifications_v1", { ...LIMITS, maxBytes: 1000 }))).toBe("query_memory_limit_exceeded");
  });

  test("past the deadline, the watchdog stops SQLite inside its join loop: 422 query_execution_timeout", () => {
    watchdog.deadlineMs = Date.now() - 1;
    const started = performance.now();
    expect(codeOf(() => run("SELECT count() FROM key_verifications_v1 AS a, key_verifications_v1 AS b, key_verifications_v1 AS c"))).toBe("query_execution_timeout");
    // 27 million joined rows would take seconds; the watchdog fires within its first checks.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(watchdog.expired).toBe(true);
  });

  test("an error SQLite finds in the query is 400 invalid_analytics_query", () => {
    watchdog.deadlineMs = Date.now() + 5000;
    expect(codeOf(() => run("SELECT no_such_column FROM key_verifications_v1"))).toBe("invalid_analytics_query");
  });
});
