/**
 * What copying the main SQLite database into PostgreSQL moves, read from the two drizzle schemas:
 * every table of the main database (storage/schema without analytics.ts) paired with its
 * PostgreSQL twin by name, column by column, in an order where a table comes after those its
 * foreign keys point to. Nothing here names a table or a column, so one added on both sides is
 * copied without a change here, and one added on a single side fails the copy before it starts
 * (a column left behind would be a value lost).
 */
import { getTableName, is } from "drizzle-orm";
import { getTableConfig as pgTableConfig, PgTable, type PgColumn } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as sqliteAnalyticsSchema from "../schema/analytics.ts";
import * as sqliteSchema from "../schema/index.ts";
import * as pgSchema from "./schema/index.ts";

/** One column copied: its name on both sides and how a SQLite value becomes the value sent to PostgreSQL. */
export interface CopiedColumn {
  name: string;
  /** The PostgreSQL type, cast to in the INSERT: `bigint`, `text`, `boolean`… */
  pgType: string;
  toPg: (value: unknown) => unknown;
}

export interface CopiedTable {
  /** The table's name, as the copy reports it (`analytics.<name>` for an analytics table). */
  name: string;
  columns: CopiedColumn[];
  /** Identity columns: the copy keeps their numbers, then moves their sequences past the largest. */
  identityColumns: string[];
  /** The table in PostgreSQL as SQL, when not `"<name>"` of the default schema. */
  target?: string;
  /** The SQLite query that reads the rows, naming `columns` in order, when not the table of the same name. */
  select?: string;
}

const exported = (schema: object): unknown[] => Object.values(schema);

/**
 * Tables the target's own triggers fill from the copied rows (workspace_usage, migration 0005):
 * copying them too would count every record twice. A replacing copy empties them with the rest.
 */
export const TRIGGER_KEPT_TABLES: readonly string[] = ["workspace_usage"];

/** The SQLite tables of the main database: the schema's tables but those of analytics.db. */
export function mainSqliteTables(): SQLiteTable[] {
  const analytics = new Set(exported(sqliteAnalyticsSchema).filter((v) => is(v, SQLiteTable)));
  return exported(sqliteSchema).filter((v): v is SQLiteTable => is(v, SQLiteTable) && !analytics.has(v));
}

/** The PostgreSQL schema's tables, its cluster-only ones included (they have no SQLite twin and are not copied). */
export function pgTables(): PgTable[] {
  return exported(pgSchema).filter((v): v is PgTable => is(v, PgTable));
}

/**
 * The tables to copy, each SQLite table with its PostgreSQL twin, parents before children. Throws
 * when a table or a column has no twin, or a PostgreSQL column has a type no conversion is known for.
 */
export function planCopy(sqliteTables: readonly SQLiteTable[] = mainSqliteTables(), targetTables: readonly PgTable[] = pgTables()): CopiedTable[] {
  const pgByName = new Map(targetTables.map((t) => [getTableName(t), t]));
  const paired = sqliteTables.filter((source) => !TRIGGER_KEPT_TABLES.includes(getTableName(source))).map((source) => {
    const name = getTableName(source);
    const target = pgByName.get(name);
    if (target === undefined) throw new Error(`the SQLite table ${name} has no PostgreSQL twin: its rows would be lost`);
    return { name, source, target };
  });
  const copied = new Set(paired.map((p) => p.name));
  return inForeignKeyOrder(paired.map(({ name, target }) => ({ name, parents: parentTables(target).filter((p) => p !== name && copied.has(p)) })))
    .map((name) => {
      const { source, target } = paired.find((p) => p.name === name)!;
      return { name, columns: pairColumns(name, source, target), identityColumns: pgTableConfig(target).columns.filter((c) => c.generatedIdentity).map((c) => c.name) };
    });
}

function parentTables(table: PgTable): string[] {
  return pgTableConfig(table).foreignKeys.map((fk) => getTableName(fk.reference().foreignTable));
}

/** Names ordered so that each comes after its parents; throws on a cycle (no order could insert it). */
function inForeignKeyOrder(tables: { name: string; parents: string[] }[]): string[] {
  const ordered: string[] = [];
  const placed = new Set<string>();
  let pending = tables;
  while (pending.length > 0) {
    const ready = pending.filter((t) => t.parents.every((p) => placed.has(p)));
    if (ready.length === 0) throw new Error(`the foreign keys of ${pending.map((t) => t.name).join(", ")} form a cycle`);
    for (const t of ready) {
      ordered.push(t.name);
      placed.add(t.name);
    }
    pending = pending.filter((t) => !placed.has(t.name));
  }
  return ordered;
}

function pairColumns(table: string, source: SQLiteTable, target: PgTable): CopiedColumn[] {
  const sourceNames = new Set(sqliteTableConfig(source).columns.map((c) => c.name));
  const targetColumns = pgTableConfig(target).columns;
  const targetNames = new Set(targetColumns.map((c) => c.name));
  const onlySource = [...sourceNames].filter((n) => !targetNames.has(n));
  if (onlySource.length > 0) throw new Error(`${table}: the SQLite column(s) ${onlySource.join(", ")} have no PostgreSQL twin: their values would be lost`);
  const onlyTarget = [...targetNames].filter((n) => !sourceNames.has(n));
  if (onlyTarget.length > 0) throw new Error(`${table}: the PostgreSQL column(s) ${onlyTarget.join(", ")} have no SQLite twin to copy from`);
  return copiedColumns(table, targetColumns);
}

/** `columns` of the PostgreSQL table `table`, each with the conversion of a SQLite value into it. */
export function copiedColumns(table: string, columns: readonly PgColumn[]): CopiedColumn[] {
  return columns.map((c) => ({ name: c.name, pgType: c.getSQLType(), toPg: converterFor(table, c) }));
}

/**
 * How a value as SQLite stores it (read with safe integers: every INTEGER a bigint) becomes the
 * value PostgreSQL receives, by the PostgreSQL column's type. A value the column cannot hold
 * unchanged (a 2 in a boolean, text in an integer column: SQLite keeps what it is given) fails
 * the copy instead of being coerced. JSON stays the text SQLite holds, byte for byte: parsing
 * and printing it again could respell it (numbers past 2^53, escapes).
 */
function converterFor(table: string, column: PgColumn): (value: unknown) => unknown {
  const where = `${table}.${column.name}`;
  const refuse = (value: unknown, wanted: string): never => {
    throw new Error(`${where}: SQLite holds ${describe(value)}, which is not ${wanted}`);
  };
  const type = column.getSQLType();
  const convert = ((): ((value: unknown) => unknown) => {
    switch (type) {
      case "bigint":
      case "integer":
      case "smallint":
        // As decimal text: PostgreSQL parses it exactly, past 2^53 too.
        return (v) => (typeof v === "bigint" ? v.toString() : refuse(v, "an integer"));
      case "boolean":
        return (v) => (v === 1n ? true : v === 0n ? false : refuse(v, "a boolean (0 or 1)"));
      case "text":
        return (v) => (typeof v === "string" ? v : refuse(v, "text"));
      case "double precision":
      case "real":
        return (v) => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : refuse(v, "a number"));
      case "bytea":
        return (v) => (v instanceof Uint8Array ? v : refuse(v, "a blob"));
      default:
        throw new Error(`${where}: no conversion from SQLite is known for the PostgreSQL type ${type}`);
    }
  })();
  return (value) => (value === null ? null : convert(value));
}

function describe(value: unknown): string {
  if (value instanceof Uint8Array) return `a blob of ${value.length} bytes`;
  return `${typeof value} ${String(value).slice(0, 40)}`;
}
