/**
 * The attack corpus of analytics.getVerifications: queries that try to read other tables, other
 * workspaces or the file system, to write, to change the connection, to smuggle a second statement
 * past the parser, or to exhaust the service. Each is refused with upstream's 400 code, or runs
 * confined to the caller's own rows. Afterwards, the database is as it was.
 * (Runaway queries and their time limit: timeout.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { expectError } from "../../../support/contract.ts";
import { embeddedOnly } from "../../../support/cluster-backend.ts";
import { runQuery, seedWorld, type AnalyticsWorld } from "./support.ts";
import { analyticsRows } from "./store.ts";

let h: Harness;
let w: AnalyticsWorld;
let before = "";
/** A root key that may read the analytics of the second API only. */
let scoped = "";

/** Row counts of the records and of the analytics tables: a change anywhere would show. */
const fingerprint = async () => JSON.stringify([
  ...await Promise.all(["keys", "root_keys", "apis", "workspaces", "audit_logs"].map((t) => h.records.count(t))),
  ...await Promise.all(["verification_events", "verification_rollups_day"].map((t) => analyticsRows(h, t))),
]);

beforeAll(async () => {
  h = await startHarness();
  w = await seedWorld(h);
  scoped = await h.rootKeyWith([`api.${w.api2}.read_analytics`]);
  before = await fingerprint();
});
afterAll(async () => { await h.stop(); });

const TABLE = "user/bad_request/invalid_analytics_table";
const FUNCTION = "user/bad_request/invalid_analytics_function";
const QUERY = "user/bad_request/invalid_analytics_query";
const TYPE = "user/bad_request/invalid_analytics_query_type";
const PER_DAY = "key_verifications_per_day_v1";
const RAW = "key_verifications_v1";

/** [what it tries, the query, the 400's type, the exact detail when it says something specific]. */
const REFUSED: Array<[string, string, string, string?]> = [
  // Other tables, named directly.
  ["the service's keys", "SELECT * FROM keys", TABLE, "Access to table 'keys' is not allowed."],
  ["root keys", "SELECT hash FROM root_keys", TABLE, "Access to table 'root_keys' is not allowed."],
  ["the audit log", "SELECT * FROM audit_logs", TABLE],
  ["the events view", "SELECT * FROM verification_events", TABLE],
  ["the physical events table", "SELECT events FROM verification_event_batches", TABLE, "Access to table 'verification_event_batches' is not allowed."],
  ["a rollup view", "SELECT * FROM verification_rollups_hour_all", TABLE, "Access to table 'verification_rollups_hour_all' is not allowed."],
  ["the fold's slice table", "SELECT * FROM temp.tg_fold_slice", TABLE],
  ["a physical totals table", "SELECT * FROM verification_totals_day", TABLE, "Access to table 'verification_totals_day' is not allowed."],
  ["a physical rollup through the schema", "SELECT * FROM main.verification_rollups_day", TABLE, "Access to table 'main.verification_rollups_day' is not allowed."],
  ["sqlite_master", "SELECT sql FROM sqlite_master", TABLE, "Access to table 'sqlite_master' is not allowed."],
  ["sqlite_schema, quoted", 'SELECT * FROM "sqlite_schema"', TABLE],
  ["the temp schema", "SELECT * FROM temp.sqlite_master", TABLE],
  ["upstream's physical table", "SELECT * FROM default.key_verifications_raw_v2", TABLE],
  ["ClickHouse system tables", "SELECT * FROM system.tables", TABLE],
  ["a pragma table function", "SELECT * FROM pragma_table_info('keys')", TABLE, "Access to table 'pragma_table_info' is not allowed."],
  ["a file table function", "SELECT * FROM file('/etc/passwd')", TABLE],
  ["a huge generated table", "SELECT count() FROM numbers(1000000000000)", TABLE],
  ["a comment in place of white space", "SELECT count() FROM/**/keys", TABLE],
  // Other tables, hidden inside allowed queries.
  ["a subquery in FROM", `SELECT count() FROM (SELECT * FROM ${RAW} UNION ALL SELECT * FROM keys)`, TABLE],
  ["IN (subquery)", `SELECT count() FROM ${RAW} WHERE key_id IN (SELECT id FROM keys)`, TABLE],
  ["EXISTS", `SELECT count() FROM ${RAW} WHERE EXISTS (SELECT 1 FROM root_keys)`, TABLE],
  ["a scalar subquery", `SELECT (SELECT hash FROM root_keys LIMIT 1) AS h FROM ${RAW}`, TABLE],
  ["a CTE", "WITH k AS (SELECT * FROM keys) SELECT * FROM k", TABLE],
  ["a CTE inside a subquery", `SELECT count() FROM ${RAW} WHERE EXISTS (WITH b AS (SELECT * FROM identities) SELECT 1 FROM b)`, TABLE],
  ["a CTE that names a later one", `WITH a AS (SELECT * FROM b), b AS (SELECT * FROM ${RAW}) SELECT * FROM a`, TABLE, "Access to table 'b' is not allowed."],
  ["a CTE that names itself", "WITH a AS (SELECT * FROM a) SELECT * FROM a", TABLE],
  ["UNION", `SELECT key_id FROM ${RAW} UNION ALL SELECT hash FROM keys`, TABLE],
  ["a JOIN", `SELECT * FROM ${RAW} AS v JOIN identities AS i ON i.id = v.identity_id`, TABLE],
  ["a comma join", `SELECT count() FROM ${RAW} AS a, root_keys AS b`, TABLE],
  ["our internal CTE names", `WITH a AS (SELECT * FROM ${RAW}) SELECT * FROM a, tg_cte_1`, TABLE],
  // Writes, other statements, the connection itself.
  ["a second statement", `SELECT count() FROM ${RAW}; DROP TABLE keys`, TYPE, "Only one SELECT statement is allowed; remove the other statements."],
  ["a second statement after a block comment", `SELECT count() FROM ${RAW} /* */; DELETE FROM keys --`, TYPE],
  ["a second statement after a line comment", `SELECT count() FROM ${RAW} -- comment\n; DROP TABLE keys`, TYPE],
  ["DELETE", `DELETE FROM ${RAW}`, TYPE, "Only SELECT queries are allowed."],
  ["UPDATE", `UPDATE ${RAW} SET outcome = 'VALID'`, TYPE],
  ["INSERT ... SELECT", `INSERT INTO ${RAW} SELECT * FROM ${RAW}`, TYPE],
  ["DROP TABLE", "DROP TABLE keys", TYPE],
  ["CREATE TABLE", "CREATE TABLE stolen AS SELECT * FROM keys", TYPE],
  ["PRAGMA", "PRAGMA journal_mode", TYPE],
  ["PRAGMA with a value", "PRAGMA writable_schema = ON", QUERY],
  ["ATTACH", "ATTACH DATABASE '/tmp/evil.db' AS evil", TYPE],
  ["DETACH", "DETACH DATABASE main", QUERY],
  ["VACUUM INTO a file", "VACUUM INTO '/tmp/copy.db'", QUERY],
  ["SHOW CREATE TABLE", "SHOW CREATE TABLE keys", TYPE],
  ["EXPLAIN", `EXPLAIN SELECT * FROM ${RAW}`, TYPE],
  ["INTO OUTFILE", `SELECT * FROM ${RAW} INTO OUTFILE '/tmp/out.csv'`, QUERY],
  ["SETTINGS", `SELECT count() FROM ${RAW} SETTINGS readonly = 0`, QUERY],
  // Functions outside the allow-list.
  ["extension loading", `SELECT load_extension('/tmp/evil.so') FROM ${RAW}`, FUNCTION, "Function 'load_extension' is not allowed."],
  ["reading a file", `SELECT readfile('/etc/passwd') FROM ${RAW}`, FUNCTION],
  ["a huge blob", `SELECT zeroblob(1000000000) FROM ${RAW}`, FUNCTION],
  ["random bytes", `SELECT randomblob(1000000000) FROM ${RAW}`, FUNCTION],
  ["the engine's version", `SELECT sqlite_version() FROM ${RAW}`, FUNCTION],
  ["the internal watchdog", `SELECT tollgate_watchdog(time) FROM ${RAW}`, FUNCTION],
  ["a schema-qualified function", `SELECT main.count() FROM ${RAW}`, FUNCTION],
  ["a window function", `SELECT sum(count) OVER (PARTITION BY key_id) FROM ${PER_DAY}`, QUERY],
  // Literal tricks and constructs outside the subset.
  ["a bound parameter", `SELECT count() FROM ${RAW} WHERE workspace_id = ?`, QUERY],
  ["a blob literal", `SELECT x'00' FROM ${RAW}`, QUERY],
  ["CAST to BLOB", `SELECT CAST(key_id AS BLOB) FROM ${RAW}`, QUERY],
  ["COLLATE", `SELECT count() FROM ${RAW} WHERE outcome = 'valid' COLLATE NOCASE`, QUERY],
  ["a column through the schema", `SELECT main.keys.hash FROM ${RAW}`, QUERY],
  ["a column of a table not in FROM", `SELECT keys.hash FROM ${RAW}`, QUERY],
  // Huge and recursive.
  ["WITH RECURSIVE", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count() FROM r", QUERY],
  ["a query over 16 KiB", `SELECT count() FROM ${RAW} WHERE key_id IN (${Array.from({ length: 2000 }, (_, i) => `'k${i}'`).join(", ")})`, QUERY,
    "Analytics query exceeds the maximum length of 16384 bytes."],
  ["deeply nested parentheses", `SELECT ${"(".repeat(300)}1${")".repeat(300)} FROM ${RAW}`, QUERY],
  ["deeply nested subqueries", `${"SELECT * FROM (".repeat(120)}SELECT * FROM ${RAW}${")".repeat(120)}`, QUERY],
];

describe("400: refused", () => {
  test("the corpus is at least 40 queries", () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(40);
  });

  for (const [what, query, type, detail] of REFUSED) {
    test(what, async () => {
      expectError(h, await runQuery(h, query), 400, type, detail);
    });
  }

  test("a chain of thousands of operators breaks the parser: 400, and the next query works", async () => {
    const res = await runQuery(h, `SELECT ${Array(5000).fill("1").join("+")} AS n FROM ${RAW}`);
    expectError(h, res, 400, QUERY);
    expect((await runQuery(h, `SELECT count() AS n FROM ${RAW}`)).body.data).toEqual([{ n: 3 }]);
  });
});

describe("200: confined to the caller's rows", () => {
  /** Rows the bootstrap key gets; never anything of workspace `other`. */
  const confined = async (query: string, key?: string) => {
    const res = await runQuery(h, query, key);
    expect(res.status).toBe(200);
    const text = JSON.stringify(res.body.data);
    for (const foreign of [w.wsB, "ks_other", "key_9"]) expect(text).not.toContain(foreign);
    return res.body.data;
  };

  test("a filter naming the other workspace", async () => {
    expect(await confined(`SELECT count() AS n FROM ${RAW} WHERE workspace_id = '${w.wsB}'`)).toEqual([{ n: 0 }]);
  });

  test("OR 1 = 1 cannot widen the injected filter", async () => {
    expect(await confined(`SELECT SUM(count) AS n FROM ${PER_DAY} WHERE 1 = 1 OR workspace_id = '${w.wsB}'`)).toEqual([{ n: 125 }]);
  });

  test("every workspace id the caller can see", async () => {
    expect(await confined(`SELECT DISTINCT workspace_id FROM ${PER_DAY} UNION SELECT workspace_id FROM ${RAW}`)).toEqual([{ workspace_id: w.wsA }]);
  });

  test("a subquery that looks for other workspaces", async () => {
    expect(await confined(`SELECT count() AS n FROM (SELECT * FROM ${RAW} WHERE workspace_id <> '${w.wsA}')`)).toEqual([{ n: 0 }]);
  });

  test("a CTE named like the public table it reads", async () => {
    expect(await confined(`WITH ${RAW} AS (SELECT * FROM ${RAW}) SELECT count() AS n FROM ${RAW}`)).toEqual([{ n: 3 }]);
  });

  test("a join on different workspaces", async () => {
    expect(await confined(`SELECT count() AS n FROM ${RAW} AS a JOIN ${PER_DAY} AS b ON a.workspace_id <> b.workspace_id`)).toEqual([{ n: 0 }]);
  });

  test("a correlated EXISTS for the other workspace's keys", async () => {
    expect(await confined(`SELECT count() AS n FROM ${RAW} AS a WHERE EXISTS (SELECT 1 FROM ${PER_DAY} AS b WHERE b.key_id = 'key_9')`)).toEqual([{ n: 0 }]);
  });

  test("aliases named like physical or system tables", async () => {
    expect(await confined(`SELECT count() AS n FROM ${RAW} AS verification_events, ${RAW} AS sqlite_master WHERE verification_events.workspace_id <> ''`))
      .toEqual([{ n: 9 }]);
  });

  test("quote and comment tricks stay inside their string or comment", async () => {
    expect(await confined(`SELECT count() AS n FROM ${RAW} WHERE outcome = 'x'' OR ''1'' = ''1'`)).toEqual([{ n: 0 }]);
    expect(await confined(`SELECT count() AS n FROM ${RAW} WHERE outcome = 'x\\' OR workspace_id <> \\''`)).toEqual([{ n: 0 }]);
    expect(await confined(`SELECT count() AS n FROM ${RAW} /* /* */ DROP TABLE keys; */`)).toEqual([{ n: 3 }]);
  });

  test("an API-scoped key: OR and key space filters stay within its APIs", async () => {
    expect(await confined(`SELECT SUM(count) AS n FROM ${PER_DAY} WHERE 1 = 1 OR key_space_id = '${w.ks1}'`, scoped)).toEqual([{ n: 6 }]);
    expect(await confined(`SELECT DISTINCT key_space_id FROM ${PER_DAY} UNION SELECT key_space_id FROM ${RAW}`, scoped)).toEqual([{ key_space_id: w.ks2 }]);
  });
});

test("after the whole corpus, nothing in the database changed", async () => {
  expect(await fingerprint()).toBe(before);
});

embeddedOnly("SQLite's quick_check of the data dir's databases, which a cluster node does not have")("after the whole corpus, both SQLite files pass quick_check", () => {
  for (const db of [h.embedded.storage, h.embedded.analytics]) expect(db.sqlite.query("PRAGMA quick_check").get()).toEqual({ quick_check: "ok" });
});
