/** Opens the SQLite database with the pragmas every connection needs, wrapped in drizzle. */
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema/index.ts";
import { createEmptyPrivateFile } from "./private-files.ts";

export type Db = BunSQLiteDatabase<typeof schema>;

export interface Storage {
  sqlite: Database;
  db: Db;
  close(): void;
}

/** How long a statement waits for another connection's write lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating when missing) the database at `path`: WAL, synchronous=NORMAL, busy_timeout,
 * foreign keys. A new file is created 0600 before SQLite opens it: SQLite gives -wal and -shm its mode.
 */
export function openStorage(path: string, opts: { readonly?: boolean } = {}): Storage {
  if (!opts.readonly) createEmptyPrivateFile(path);
  const sqlite = opts.readonly ? new Database(path, { readonly: true }) : new Database(path, { create: true, strict: true });
  // First, so that another process opening the same file at the same moment waits instead of failing.
  sqlite.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (!opts.readonly) {
    sqlite.run("PRAGMA journal_mode = WAL");
    sqlite.run("PRAGMA synchronous = NORMAL");
  }
  sqlite.run("PRAGMA foreign_keys = ON");
  const db = drizzle({ client: statementCaching(sqlite), schema });
  return {
    sqlite,
    db,
    close: () => sqlite.close(),
  };
}

/** The outcome of `PRAGMA wal_checkpoint`: `busy` 1 when it could not finish, frames in the WAL and moved. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The client drizzle's bun-sqlite session talks to (it calls only these three). drizzle prepares
 * every query it runs, and compiling a statement costs more than running it; bun:sqlite's `query`
 * keeps compiled statements by their SQL text, so each distinct statement is compiled once.
 */
function statementCaching(sqlite: Database): Database {
  const client: Pick<Database, "prepare" | "exec" | "transaction"> = {
    prepare: ((sql: string) => sqlite.query(sql)) as Database["prepare"],
    exec: (sql: string, ...bindings: never[]) => sqlite.exec(sql, ...bindings),
    transaction: (fn) => sqlite.transaction(fn),
  };
  return client as Database;
}

/**
 * Moves every WAL frame into the database file and truncates the WAL, so that a stopped service
 * leaves one self-contained `tollgate.db` (what an operator copies or restores). Another connection
 * that is just closing (a worker thread's) can hold SQLite's checkpoint lock for a moment, and a
 * checkpoint that finds it taken gives up at once, busy: so it is tried again, for at most
 * `timeoutMs`. Returns the last outcome; `busy` 0 means the WAL is empty.
 */
export function checkpointWal(storage: Storage, timeoutMs = 1000): CheckpointResult {
  const checkpoint = storage.sqlite.query<CheckpointResult, []>("PRAGMA wal_checkpoint(TRUNCATE)");
  const deadline = performance.now() + timeoutMs;
  let result = checkpoint.get() ?? { busy: 1, log: -1, checkpointed: -1 };
  while (result.busy !== 0 && performance.now() < deadline) {
    Bun.sleepSync(5);
    result = checkpoint.get() ?? result;
  }
  checkpoint.finalize();
  return result;
}

/** The database's size in bytes (pages in use and free), without the WAL. */
export function databaseSizeBytes(storage: Storage): number {
  const row = storage.sqlite.query<{ bytes: number }, []>("SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()").get();
  return row?.bytes ?? 0;
}

/** The WAL file's size a writer cuts it back to when it starts the WAL again (see checkpoint-pass.ts). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * For a connection of `serve`, where the checkpointer thread moves the WAL: no automatic checkpoint
 * after its commits (that would copy pages and sync the file on this connection's thread), and the
 * WAL file cut back to WAL_SIZE_LIMIT_BYTES whenever this connection starts the WAL again.
 */
export function leaveCheckpointsToCheckpointer(sqlite: Database): void {
  sqlite.run("PRAGMA wal_autocheckpoint = 0");
  sqlite.run(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

/** Runs `fn` in one SQLite transaction. `fn` must be synchronous: an await inside would commit half its writes. */
export function inTransaction<T>(storage: Storage, fn: () => T): T {
  return storage.sqlite.transaction(fn).immediate();
}

/**
 * Like `inTransaction`, but never waits for the write lock: when another connection holds it, returns
 * `{ done: false }` at once (nothing written) instead of blocking the thread for up to BUSY_TIMEOUT_MS.
 * Not for use inside another transaction.
 */
export function tryInTransaction<T>(storage: Storage, fn: () => T): { done: true; value: T } | { done: false } {
  const sqlite = storage.sqlite;
  // query() caches the compiled statements: this runs once per group commit of credit spends.
  sqlite.query("PRAGMA busy_timeout = 0").run();
  try {
    return { done: true, value: sqlite.transaction(fn).immediate() };
  } catch (error) {
    if (isBusy(error)) return { done: false };
    throw error;
  } finally {
    sqlite.query(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`).run();
  }
}

/** SQLITE_BUSY: another connection holds the lock this statement needs. */
export function isBusy(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "SQLITE_BUSY";
}
