/**
 * The PostgreSQL schema (src/storage/pg/schema) mirrors the SQLite one of the main database table
 * for table: names, columns as the code sees them (JS type, nullability, default), primary keys,
 * unique constraints, indexes with their conditions, and foreign keys. Read from drizzle's table
 * configs of both dialects, so a change made on one side only fails here. The cluster mode's own
 * tables, named in CLUSTER_ONLY_TABLES, are the one exception: PostgreSQL has them and SQLite must not. No server needed.
 */
import { describe, expect, test } from "bun:test";
import { Column, getTableName, is, SQL, StringChunk, type Table } from "drizzle-orm";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as sqliteAnalytics from "../../src/storage/schema/analytics.ts";
import * as sqliteSchema from "../../src/storage/schema/index.ts";
import * as pgSchema from "../../src/storage/pg/schema/index.ts";

/** The one function each dialect spells differently in an index: same arguments, same result. */
const sqliteToPg = (text: string) => text.replace(/\binstr\(/g, "strpos(");

/** PostgreSQL's lower() under COLLATE "C" folds ASCII letters only: SQLite's lower(). */
const pgToSqliteFolding = (text: string) => text.replace(/\blower\((\w+) COLLATE "C"\)/g, "lower($1)");

/** The integer columns that stay int4 in PostgreSQL: small by construction. Every other one is int8. */
const INT4_COLUMNS = new Set(["key_spaces.default_bytes", "keys.refill_day", "ratelimit_log.windows"]);

/** The PostgreSQL tables with no SQLite twin (pg/schema/cluster.ts, credit-spends.ts, cluster-settings.ts): every other one must mirror SQLite's. */
const CLUSTER_ONLY_TABLES = ["cluster_change_notices", "credit_spends", "job_runs", "cluster_settings"];

const exported = (schema: object): unknown[] => Object.values(schema);
const analyticsTables = new Set(exported(sqliteAnalytics).filter((v) => is(v, SQLiteTable)));
const sqliteTables = new Map(exported(sqliteSchema)
  .filter((v): v is SQLiteTable => is(v, SQLiteTable) && !analyticsTables.has(v))
  .map((t) => [getTableName(t), t]));
const allPgTables = exported(pgSchema).filter((v): v is PgTable => is(v, PgTable));
/** The main database's tables: those of the `analytics` schema are analytics.db's twins (below). */
const pgTables = new Map(allPgTables.filter((t) => pgConfig(t).schema === undefined).map((t) => [getTableName(t), t]));
const pgAnalyticsTables = new Map(allPgTables.filter((t) => pgConfig(t).schema === "analytics").map((t) => [getTableName(t), t]));

/** A column or an index expression as text: `lower(name)`, `deleted_at is null`. */
function render(part: unknown): string {
  if (is(part, SQL)) return part.queryChunks.map(render).join("");
  if (is(part, StringChunk)) return part.value.join("");
  if (typeof part === "string") return part;
  if (part !== null && typeof part === "object" && "name" in part) return String(part.name);
  throw new Error(`cannot render ${String(part)}`);
}

/** How the code sees a column: its JS type (json for SQLite's json mode and PostgreSQL's json text), nullability, default. */
function columnShape(c: Column): { type: string; notNull: boolean; default: unknown } {
  const type = c.columnType === "PgCustomColumn" && c.getSQLType() === "text" ? "json" : c.dataType;
  return { type, notNull: c.notNull, default: c.default };
}

interface TableParts {
  columns: Column[];
  primaryKeys: { columns: Column[] }[];
  uniqueConstraints: { getName(): string | undefined; columns: Column[] }[];
  indexes: { config: { name?: string; unique: boolean; columns: unknown[]; where?: SQL } }[];
  foreignKeys: { onDelete?: string; onUpdate?: string; reference(): { columns: Column[]; foreignColumns: Column[]; foreignTable: Table } }[];
}

/** A dialect-neutral description of a table, to compare with toEqual. */
function shapeOf(parts: TableParts, translate: (text: string) => string, foldColumns: (text: string) => string = (text) => text) {
  const names = (columns: Column[]) => columns.map((c) => c.name).join(", ");
  return {
    columns: Object.fromEntries(parts.columns.map((c) => [c.name, columnShape(c)])),
    primaryKey: [...parts.columns.filter((c) => c.primary).map((c) => c.name), ...parts.primaryKeys.flatMap((pk) => pk.columns.map((c) => c.name))],
    uniques: [
      ...parts.columns.filter((c) => c.isUnique).map((c) => c.name),
      ...parts.uniqueConstraints.map((u) => names(u.columns)),
    ].sort(),
    indexes: parts.indexes.map(({ config: i }) =>
      `${i.unique ? "unique " : ""}${i.name} (${i.columns.map((c) => foldColumns(render(c))).join(", ")})${i.where ? ` where ${translate(render(i.where))}` : ""}`).sort(),
    foreignKeys: parts.foreignKeys.map((fk) => {
      const ref = fk.reference();
      return `(${names(ref.columns)}) → ${getTableName(ref.foreignTable)} (${names(ref.foreignColumns)}) on delete ${fk.onDelete ?? "no action"} on update ${fk.onUpdate ?? "no action"}`;
    }).sort(),
  };
}

describe("the PostgreSQL schema mirrors the SQLite one of the main database", () => {
  test("has the same tables, and none that SQLite lacks but the cluster-only ones", () => {
    expect(sqliteTables.size).toBeGreaterThan(10);
    expect([...pgTables.keys()].sort()).toEqual([...sqliteTables.keys(), ...CLUSTER_ONLY_TABLES].sort());
  });

  test.each([...sqliteTables.keys()].sort())("%s: same columns, keys, unique constraints, indexes and foreign keys", (name) => {
    const pg = pgTables.get(name);
    if (pg === undefined) throw new Error(`no PostgreSQL table ${name}`);
    expect(shapeOf(pgConfig(pg), (text) => text, pgToSqliteFolding)).toEqual(shapeOf(sqliteConfig(sqliteTables.get(name)!), sqliteToPg));
  });

  test("integer columns are int8 except the few small ones named here", () => {
    expect(pgAnalyticsTables.size).toBeGreaterThan(0);
    const int4 = [...pgTables.values()].flatMap((t) =>
      pgConfig(t).columns.filter((c) => c.getSQLType() === "integer").map((c) => `${getTableName(t)}.${c.name}`));
    expect(int4.sort()).toEqual([...INT4_COLUMNS].sort());
  });
});

/**
 * The analytics tables differ by design (pg/schema/analytics.ts): one row per event instead of batch
 * rows, and no fold, so no `folded` column. The rollups, totals and decisions keep analytics.db's
 * columns and primary keys, so the public tables read the same on both.
 */
describe("the PostgreSQL analytics tables keep analytics.db's rollups, totals and decisions", () => {
  const sqliteByName = new Map([...analyticsTables].map((t) => [getTableName(t as SQLiteTable), t as SQLiteTable]));
  const shared = [...pgAnalyticsTables.keys()].filter((name) => name !== "verification_events").sort();

  test("every SQLite analytics table has a twin but the batch rows, which PostgreSQL keeps one event a row", () => {
    expect([...sqliteByName.keys()].filter((name) => !pgAnalyticsTables.has(name))).toEqual(["verification_event_batches"]);
    expect(shared.length).toBe(12);
  });

  test.each(shared)("%s: same columns and primary key", (name) => {
    const shape = (parts: TableParts) => {
      const { columns, primaryKey } = shapeOf(parts, (text) => text);
      delete columns["folded"];
      return { columns, primaryKey };
    };
    expect(shape(pgConfig(pgAnalyticsTables.get(name)!))).toEqual(shape(sqliteConfig(sqliteByName.get(name)!)));
  });
});
