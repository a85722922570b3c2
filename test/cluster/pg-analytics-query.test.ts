/**
 * Callers' analytics queries on PostgreSQL (src/services/analytics/execute-pg.ts) against a real
 * server: each runs as the read-only role tollgate_analytics_reader in a read-only transaction, so
 * that even SQL the translator would never print (written by hand here) reads nothing outside
 * schema `analytics` and writes nothing; statement_timeout ends it at its deadline; PostgreSQL's
 * errors become the API's codes; int8 and numeric results are numbers, as on SQLite.
 */
import { describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { AppError } from "../../src/errors/app-error.ts";
import { executeCompiledPg, openPgAnalyticsConnection } from "../../src/services/analytics/execute-pg.ts";
import { compileAnalyticsQuery, initSqlParser, POSTGRES, type CompiledQuery } from "../../src/services/analytics/query/compile.ts";
import { postgresForFile } from "./pg-database.ts";
import { missing, skipWithout } from "../support/tools.ts";

const LIMITS = { maxRows: 100, maxBytes: 1024 * 1024, timeoutMs: 5000 };

describe.skipIf(skipWithout(missing.postgres(), "the PostgreSQL analytics queries"))("analytics queries on PostgreSQL", () => {
  const connections: SQL[] = [];
  const pg = postgresForFile(async () => { for (const c of connections) await c.close(); });

  /** A migrated database with three events of ws_a and one of ws_b, and a key in `public.keys`; a query process's connection to it. */
  async function database(): Promise<{ admin: SQL; conn: SQL; url: string }> {
    await initSqlParser();
    const url = await pg.freshDatabase();
    const admin = pg.client(url);
    await admin`INSERT INTO workspaces (id, name, created_at) VALUES ('ws_a', 'acme', 1)`;
    await admin`INSERT INTO key_spaces (id, workspace_id, created_at) VALUES ('ks_1', 'ws_a', 1)`;
    await admin`INSERT INTO keys (id, workspace_id, key_space_id, hash, start, created_at) VALUES ('key_1', 'ws_a', 'ks_1', 'secret_hash', 'sk_', 1)`;
    await admin.unsafe(`INSERT INTO analytics.verification_events (time, workspace_id, key_space_id, key_id, outcome, spent_credits, latency_ms)
      VALUES (1000, 'ws_a', 'ks_1', 'key_1', 'VALID', 1, 2), (2000, 'ws_a', 'ks_1', 'key_1', 'VALID', 2, 4), (3000, 'ws_a', 'ks_1', 'key_1', 'RATE_LIMITED', 0, 6),
      (1000, 'ws_b', 'ks_2', 'key_2', 'VALID', 5, 1)`);
    const conn = openPgAnalyticsConnection(url);
    connections.push(conn);
    return { admin, conn, url };
  }

  const run = (conn: SQL, compiled: CompiledQuery, timeoutMs = LIMITS.timeoutMs) =>
    executeCompiledPg(conn, compiled, { ...LIMITS, timeoutMs, deadlineMs: Date.now() + timeoutMs });
  const caller = (sql: string): CompiledQuery =>
    compileAnalyticsQuery(sql, { confinement: { workspaceId: "ws_a", keySpaceIds: null }, nowMs: 10_000, maxRows: LIMITS.maxRows, dialect: POSTGRES });
  const handWritten = (sql: string): CompiledQuery => ({ sql, params: [] });
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  };

  test("a caller's query: its workspace's rows, counts and sums as numbers, comparisons as 1 and 0", async () => {
    const { conn } = await database();
    expect(await run(conn, caller("SELECT count() AS n, SUM(spent_credits) AS credits, avg(latency) AS latency, countIf(outcome = 'VALID') AS valid FROM key_verifications_v1")))
      .toEqual([{ n: 3, credits: 3, latency: 4, valid: 2 }]);
    expect(await run(conn, caller("SELECT time, outcome = 'VALID' AS ok, time / 4000 AS part FROM key_verifications_v1 ORDER BY time")))
      .toEqual([{ time: 1000, ok: 1, part: 0.25 }, { time: 2000, ok: 1, part: 0.5 }, { time: 3000, ok: 0, part: 0.75 }]);
  });

  test("the reader cannot read the records: a query naming public.keys is refused with permission denied", async () => {
    const { conn } = await database();
    for (const sql of ["SELECT hash FROM public.keys", "SELECT count(*) FROM public.workspaces", "SELECT * FROM pg_catalog.pg_authid"]) {
      const error = await refusal(run(conn, handWritten(sql)));
      expect({ sql, code: error.code }).toEqual({ sql, code: "invalid_analytics_query" });
      expect(error.detail).toContain("permission denied");
    }
    // Unqualified, the name finds nothing: only pg_catalog is on the search path.
    expect((await refusal(run(conn, handWritten("SELECT hash FROM keys")))).detail).toContain('relation "keys" does not exist');
    expect(await run(conn, handWritten("SELECT current_user AS who"))).toEqual([{ who: "tollgate_analytics_reader" }]);
  });

  test("writes are refused, in the analytics schema too, and nothing changed", async () => {
    const { admin, conn } = await database();
    const writes = [
      "INSERT INTO analytics.verification_events (time, workspace_id, key_space_id, key_id, outcome) VALUES (1, 'ws_a', 'ks_1', 'k', 'VALID')",
      "DELETE FROM analytics.verification_events",
      "WITH gone AS (DELETE FROM analytics.verification_events RETURNING 1) SELECT count(*) AS n FROM gone",
      "UPDATE public.keys SET hash = 'x'",
      "CREATE TABLE analytics.stolen AS SELECT * FROM analytics.verification_events",
      "SELECT 1 AS a; DROP TABLE analytics.verification_events",
    ];
    for (const sql of writes) expect({ sql, code: (await refusal(run(conn, handWritten(sql)))).code }).toEqual({ sql, code: "invalid_analytics_query" });
    expect(await admin`SELECT count(*)::int AS n FROM analytics.verification_events`).toEqual([{ n: 4 }]);
    expect(await admin`SELECT hash FROM keys`).toEqual([{ hash: "secret_hash" }]);
    // The connection is back in its own role between queries.
    expect(await admin`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'stolen'`).toEqual([{ n: 0 }]);
  });

  test("statement_timeout ends a query at its deadline: 422 query_execution_timeout, and the connection serves the next query", async () => {
    const { conn } = await database();
    const started = performance.now();
    const error = await refusal(run(conn, handWritten("SELECT pg_sleep(10) AS slept"), 300));
    expect(error.code).toBe("query_execution_timeout");
    expect(performance.now() - started).toBeLessThan(3000);
    expect(await run(conn, caller("SELECT count() AS n FROM key_verifications_v1"))).toEqual([{ n: 3 }]);
  });

  test("errors in the query are 400 with SQLite's words for an unknown column; an unreachable server is 503", async () => {
    const { conn } = await database();
    expect((await refusal(run(conn, caller("SELECT nope FROM key_verifications_v1")))).detail).toBe("The query could not be run: no such column: nope");
    expect((await refusal(run(conn, caller("SELECT key_id + 1 AS x FROM key_verifications_v1")))).code).toBe("invalid_analytics_query");
    const unreachable = openPgAnalyticsConnection("postgres://nobody@127.0.0.1:1/none");
    connections.push(unreachable);
    expect((await refusal(run(unreachable, caller("SELECT count() FROM key_verifications_v1")))).code).toBe("analytics_connection_failed");
  });

  test("a connection PostgreSQL ended fails its query with 503; the next query connects anew", async () => {
    const { admin, conn } = await database();
    expect(await run(conn, caller("SELECT count() AS n FROM key_verifications_v1"))).toEqual([{ n: 3 }]);
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()`;
    const first = await run(conn, caller("SELECT count() AS n FROM key_verifications_v1")).then((rows) => JSON.stringify(rows), (e: unknown) => (e as AppError).code);
    // Bun may notice the closed socket before it sends the query, and connect anew at once.
    expect(['[{"n":3}]', "analytics_connection_failed"]).toContain(first);
    expect(await run(conn, caller("SELECT count() AS n FROM key_verifications_v1"))).toEqual([{ n: 3 }]);
  });

  test("a user not granted the reader role is a set-up fault: 503, not the caller's 400", async () => {
    const { admin, url: databaseUrl } = await database();
    await admin.unsafe("CREATE ROLE tollgate_outsider LOGIN");
    const url = new URL(databaseUrl);
    url.username = "tollgate_outsider";
    const outsider = openPgAnalyticsConnection(url.href);
    connections.push(outsider);
    const error = await refusal(run(outsider, caller("SELECT count() FROM key_verifications_v1")));
    expect(error.code).toBe("analytics_connection_failed");
    expect(String((error.cause as Error).message)).toContain("permission denied to set role");
  });

  test("the result-size limit holds", async () => {
    const { conn } = await database();
    const error = await refusal(executeCompiledPg(conn, caller("SELECT key_id, outcome FROM key_verifications_v1"), { ...LIMITS, maxBytes: 60, deadlineMs: Date.now() + 5000 }));
    expect(error.code).toBe("query_memory_limit_exceeded");
  });
});
