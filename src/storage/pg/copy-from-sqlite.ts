/**
 * Copies every record of a data dir's main database (tollgate.db) into a PostgreSQL database that
 * applyPgMigrations has brought up to date: the copy behind moving a single box to the cluster
 * mode. All of it runs in one PostgreSQL transaction, so the target ends with every row or none;
 * SQLite is read in one read transaction, so the rows copied are one consistent state. Tables,
 * columns and conversions come from the two drizzle schemas (copy-tables.ts).
 *
 * The state a running `serve` holds in memory is in the tables once it has stopped: credit spends
 * not yet folded into `keys.remaining` are rows of `credit_journal`, the rate-limit windows are
 * chunks of `ratelimit_log` (both copied as they are). The data dir's lock is taken for the copy:
 * it refuses while a `serve` runs, and keeps one from starting and writing meanwhile.
 *
 * The data dir's analytics.db, when there is one, is copied in the same transaction into the
 * `analytics` schema (copy-analytics.ts: every event a row, every public rollup, totals and
 * rate-limit decisions table with the counts it shows on the box), read in a read transaction of
 * its own; the refusal of a target that holds rows, and `replace`, cover those tables too. Not
 * copied: SQLite's own `__drizzle_migrations` rows (PostgreSQL records its own migrations). The
 * cluster-only tables (change versions, job runs) are left as they are, but for the master key's
 * fingerprint (`fingerprint`), recorded in the same transaction: the copy initialises the cluster.
 * Recoverable keys' ciphertexts and the workspace data keys are copied byte for byte, but the master
 * key that opens the data keys is not a record: the operator carries it (TOLLGATE_MASTER_KEY or
 * `<data dir>/master.key`) to every node.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { SQL } from "bun";
import { ANALYTICS_DATABASE_FILE, DATABASE_FILE } from "../data-dir.ts";
import { openStorage, type Storage } from "../db.ts";
import { lockDataDir } from "../instance-lock.ts";
import { refuseNewerDatabase } from "../migrate.ts";
import { ANALYTICS_MIGRATIONS, MIGRATIONS, type EmbeddedMigration } from "../migrations.ts";
import { planAnalyticsCopy } from "./copy-analytics.ts";
import { planCopy, TRIGGER_KEPT_TABLES, type CopiedTable } from "./copy-tables.ts";
import { quoteIdentifier } from "./db.ts";
import { recordFingerprint } from "./cluster-settings.ts";

/** Rows sent in one INSERT at most: a batch, never a whole table, is held in memory. */
export const COPY_BATCH_ROWS = 1000;
/** Text and blob bytes of a batch at most: a rate-limit log chunk can hold hundreds of KB. */
export const COPY_BATCH_BYTES = 4 * 1024 * 1024;
/** PostgreSQL's limit on one statement's parameters. */
const MAX_PARAMETERS = 65_535;
/** Serializes copies into one database: a second waits, then finds the rows of the first. */
export const COPY_LOCK_KEY = 0x746f6c6c636f7079n;

export interface CopyOptions {
  /** Delete the copied tables' rows in the target first (in the same transaction) instead of refusing a target that holds any. */
  replace?: boolean;
  /** The master key's fingerprint to record as the cluster's (lib/key-fingerprint.ts), in the copy's transaction. */
  fingerprint?: string;
  /** Rows per INSERT (COPY_BATCH_ROWS unless given). */
  batchRows?: number;
}

/** Rows copied per table, in the order copied. */
export type CopiedRows = Record<string, number>;

/** The target holds records already, and `replace` was not asked for. */
export class TargetNotEmptyError extends Error {
  constructor(readonly tables: string[]) {
    super(`the PostgreSQL database already holds records (in ${tables.join(", ")}); nothing was copied. `
      + "Copy into an empty database, or ask to replace its records.");
    this.name = "TargetNotEmptyError";
  }
}

/** The main database has migrations still to apply: its tables lack what the schema copies. */
export class SourceNotMigratedError extends Error {
  constructor(readonly path: string) {
    super(`${path} was written by an older tollgate: run \`tollgate migrate\` with this version on its data dir first; nothing was copied`);
    this.name = "SourceNotMigratedError";
  }
}

/**
 * Copies the main database of `dataDir`, and its analytics.db if it has one, into the PostgreSQL
 * database at `postgresUrl`, holding the data dir's lock meanwhile (DataDirInUseError while a
 * `serve` holds it). Opens both files read-only.
 */
export async function copyDataDirToPostgres(dataDir: string, postgresUrl: string, opts: CopyOptions = {}): Promise<CopiedRows> {
  const path = join(dataDir, DATABASE_FILE);
  if (!existsSync(path)) throw new Error(`no ${DATABASE_FILE} in ${dataDir}: nothing to copy`);
  const lock = lockDataDir(dataDir);
  try {
    const source = openStorage(path, { readonly: true });
    const analyticsPath = join(dataDir, ANALYTICS_DATABASE_FILE);
    const analytics = existsSync(analyticsPath) ? openStorage(analyticsPath, { readonly: true }) : undefined;
    const target = new SQL(postgresUrl, { max: 1 });
    try {
      return await copyMainDatabase(source, target, opts, planCopy(), analytics);
    } finally {
      await target.close();
      analytics?.close();
      source.close();
    }
  } finally {
    lock.release();
  }
}

/**
 * Copies every table of `source` (a main database, fully migrated) and of `analytics` (its
 * analytics.db, fully migrated, if given) through `target`, in one transaction there. Throws
 * TargetNotEmptyError, writing nothing, when a copied table of the target (the analytics tables
 * included) holds a row, unless `replace`.
 */
export async function copyMainDatabase(source: Storage, target: SQL, opts: CopyOptions = {}, tables: CopiedTable[] = planCopy(), analytics?: Storage): Promise<CopiedRows> {
  refuseUnmigrated(source.sqlite, MIGRATIONS);
  if (analytics) refuseUnmigrated(analytics.sqlite, ANALYTICS_MIGRATIONS);
  const batchRows = opts.batchRows ?? COPY_BATCH_ROWS;
  if (!Number.isInteger(batchRows) || batchRows < 1) throw new Error(`batchRows must be a positive integer, not ${batchRows}`);
  const analyticsTables = planAnalyticsCopy();
  // One read transaction per file: every table is read from the same state of it.
  source.sqlite.run("BEGIN");
  analytics?.sqlite.run("BEGIN");
  try {
    return await target.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${COPY_LOCK_KEY})`;
      const everyTable = [...tables, ...analyticsTables];
      const occupied = await tablesWithRows(tx, everyTable);
      if (occupied.length > 0) {
        if (!opts.replace) throw new TargetNotEmptyError(occupied);
        await tx.unsafe(`TRUNCATE ${[...everyTable.map(targetOf), ...TRIGGER_KEPT_TABLES.map(quoteIdentifier)].join(", ")}`);
      }
      const copied: CopiedRows = {};
      for (const table of tables) copied[table.name] = await copyTable(source.sqlite, tx, table, batchRows);
      for (const table of tables) await restartIdentities(tx, table);
      if (analytics) for (const table of analyticsTables) copied[table.name] = await copyTable(analytics.sqlite, tx, table, batchRows);
      if (opts.fingerprint !== undefined) await recordFingerprint(tx, opts.fingerprint, Date.now());
      return copied;
    });
  } finally {
    analytics?.sqlite.run("COMMIT");
    source.sqlite.run("COMMIT");
  }
}

/** The table in PostgreSQL, as SQL. */
const targetOf = (table: CopiedTable): string => table.target ?? quoteIdentifier(table.name);

function refuseUnmigrated(sqlite: Database, migrations: readonly EmbeddedMigration[]): void {
  refuseNewerDatabase(sqlite, migrations);
  const newest = migrations.at(-1)?.createdAt ?? -1;
  const last = sqlite.query<{ created_at: number }, []>(`SELECT max(created_at) AS created_at FROM "__drizzle_migrations"`).get();
  if (Number(last?.created_at ?? -1) < newest) throw new SourceNotMigratedError(sqlite.filename);
}

async function tablesWithRows(tx: SQL, tables: CopiedTable[]): Promise<string[]> {
  const occupied: string[] = [];
  for (const t of tables) {
    const rows: unknown[] = await tx.unsafe(`SELECT 1 FROM ${targetOf(t)} LIMIT 1`);
    if (rows.length > 0) occupied.push(t.name);
  }
  return occupied;
}

/** Streams `table`'s rows out of SQLite and inserts them in batches; the number of rows. */
async function copyTable(sqlite: Database, tx: SQL, table: CopiedTable, batchRows: number): Promise<number> {
  const names = table.columns.map((c) => quoteIdentifier(c.name)).join(", ");
  const rowsPerInsert = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMETERS / table.columns.length)));
  // prepare, not query: bun:sqlite caches query()'s statements, and this one is read across awaits.
  const select = sqlite.prepare<Record<string, unknown>, []>(table.select ?? `SELECT ${names} FROM ${quoteIdentifier(table.name)}`);
  select.safeIntegers(true);
  let copied = 0;
  let batch: unknown[][] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await insertBatch(tx, table, batch);
    copied += batch.length;
    batch = [];
    batchBytes = 0;
  };
  try {
    for (const row of select.iterate()) {
      batch.push(table.columns.map((c) => c.toPg(row[c.name])));
      batchBytes += rowBytes(row);
      if (batch.length >= rowsPerInsert || batchBytes >= COPY_BATCH_BYTES) await flush();
    }
    await flush();
  } finally {
    select.finalize();
  }
  return copied;
}

function rowBytes(row: Record<string, unknown>): number {
  let bytes = 0;
  for (const value of Object.values(row)) {
    if (typeof value === "string") bytes += value.length * 2;
    else if (value instanceof Uint8Array) bytes += value.length;
    else bytes += 8;
  }
  return bytes;
}

async function insertBatch(tx: SQL, table: CopiedTable, rows: unknown[][]): Promise<void> {
  const width = table.columns.length;
  const tuples = rows.map((_, r) => `(${table.columns.map((c, i) => `$${r * width + i + 1}::${c.pgType}`).join(", ")})`);
  // The copy keeps identity columns' numbers: other tables or a restore may refer to them.
  const overriding = table.identityColumns.length > 0 ? " OVERRIDING SYSTEM VALUE" : "";
  const columns = table.columns.map((c) => quoteIdentifier(c.name)).join(", ");
  await tx.unsafe(`INSERT INTO ${targetOf(table)} (${columns})${overriding} VALUES ${tuples.join(", ")}`, rows.flat());
}

/**
 * Rows inserted with their own identity numbers leave the sequence where it was: the next insert
 * without a number would collide with a copied row. Moved to just past the largest copied number.
 */
async function restartIdentities(tx: SQL, table: CopiedTable): Promise<void> {
  for (const column of table.identityColumns) {
    await tx.unsafe(
      `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${quoteIdentifier(column)}) FROM ${quoteIdentifier(table.name)}), 0) + 1, false)`,
      [quoteIdentifier(table.name), column],
    );
  }
}
