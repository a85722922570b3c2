/** Opens the SQLite database with the pragmas every connection needs, wrapped in drizzle. */
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema/index.ts";

export type Db = BunSQLiteDatabase<typeof schema>;

export interface Storage {
  sqlite: Database;
  db: Db;
  close(): void;
}

/** Opens (creating when missing) the database at `path`: WAL, synchronous=NORMAL, busy_timeout, foreign keys. */
export function openStorage(path: string, opts: { readonly?: boolean } = {}): Storage {
  const sqlite = opts.readonly ? new Database(path, { readonly: true }) : new Database(path, { create: true, strict: true });
  // First, so that another process opening the same file at the same moment waits instead of failing.
  sqlite.run("PRAGMA busy_timeout = 5000");
  if (!opts.readonly) {
    sqlite.run("PRAGMA journal_mode = WAL");
    sqlite.run("PRAGMA synchronous = NORMAL");
  }
  sqlite.run("PRAGMA foreign_keys = ON");
  const db = drizzle({ client: sqlite, schema });
  return {
    sqlite,
    db,
    close: () => sqlite.close(),
  };
}

/** Runs `fn` in one SQLite transaction. `fn` must be synchronous: an await inside would commit half its writes. */
export function inTransaction<T>(storage: Storage, fn: () => T): T {
  return storage.sqlite.transaction(fn).immediate();
}
