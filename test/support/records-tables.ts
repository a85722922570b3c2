/**
 * Direct access to the records' tables for route tests, the same on both backends: bun:sqlite over
 * tollgate.db in the embedded mode, a PostgreSQL client of the harness's database in the cluster
 * mode. Tests write portable SQL (plain SELECT/COUNT/UPDATE/INSERT with `?` placeholders, TRUE/FALSE
 * for booleans); int8 values come back as numbers on both (PostgreSQL's client reads them as BigInt).
 */
import { SQL } from "bun";
import type { Database, SQLQueryBindings } from "bun:sqlite";

export interface RecordTables {
  /** The rows a query answers, `?` placeholders bound in order. */
  rows<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** How many rows of `table` match `where` (all when none). */
  count(table: string, where?: string, ...params: unknown[]): Promise<number>;
  /** Runs a statement that answers no rows (UPDATE, INSERT, DELETE). */
  run(sql: string, ...params: unknown[]): Promise<void>;
  /** The names of every table of the records' database, sorted. */
  tables(): Promise<string[]>;
  close(): Promise<void>;
}

function countSql(table: string, where?: string): string {
  return `SELECT count(*) AS n FROM ${table}${where === undefined ? "" : ` WHERE ${where}`}`;
}

/** The embedded tables; `sqlite` is asked for on each call since a restart opens the database anew. */
export function sqliteTables(sqlite: () => Database): RecordTables {
  const binds = (params: unknown[]) => params as SQLQueryBindings[];
  return {
    async rows<T>(sql: string, ...params: unknown[]) {
      return sqlite().query(sql).all(...binds(params)) as T[];
    },
    async count(table, where, ...params) {
      return (sqlite().query(countSql(table, where)).get(...binds(params)) as { n: number }).n;
    },
    async run(sql, ...params) {
      sqlite().run(sql, binds(params));
    },
    async tables() {
      return sqlite().query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all().map((t) => t.name);
    },
    async close() {},
  };
}

/** `?` placeholders as PostgreSQL's `$1…`; the tests' SQL has no `?` inside string literals. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function numbersForBigints(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([column, value]) => [column, typeof value === "bigint" ? Number(value) : value]));
}

/** The cluster's tables, over a client of its own on the harness's database. */
export function postgresTables(url: string): RecordTables {
  const client = new SQL(url, { max: 1, bigint: true });
  const rows = async <T>(sql: string, ...params: unknown[]): Promise<T[]> =>
    [...(await client.unsafe(numbered(sql), params))].map((row: Record<string, unknown>) => numbersForBigints(row) as T);
  return {
    rows,
    async count(table, where, ...params) {
      return (await rows<{ n: number }>(countSql(table, where), ...params))[0]!.n;
    },
    async run(sql, ...params) {
      await client.unsafe(numbered(sql), params);
    },
    async tables() {
      return (await rows<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")).map((t) => t.name);
    },
    async close() {
      await client.close();
    },
  };
}
