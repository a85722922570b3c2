/**
 * The readiness checks of one database: its file and directory writable, its write lock
 * obtainable, its migrations those of this version. Cheap enough for a probe every second: two
 * access() calls, a `BEGIN IMMEDIATE; ROLLBACK` (which writes nothing) and one read of the
 * migrations table, a handful of rows.
 */
import { accessSync, constants } from "node:fs";
import { dirname } from "node:path";
import type { Storage } from "./db.ts";
import { BUSY_TIMEOUT_MS, isBusy } from "./db.ts";
import type { EmbeddedMigration } from "./migrations.ts";

/** Why the database is not ready, or undefined when it is. */
export function databaseNotReady(storage: Storage, name: string, migrations: readonly EmbeddedMigration[]): string | undefined {
  return notWritable(storage, name) ?? migrationsNotCurrent(storage, name, migrations);
}

function notWritable(storage: Storage, name: string): string | undefined {
  const file = storage.sqlite.filename;
  // The directory too: SQLite creates the -wal and -shm files beside the database.
  for (const path of [file, dirname(file)]) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      return `${name} is not writable: ${path}: ${(error as Error).message}`;
    }
  }
  const sqlite = storage.sqlite;
  // No wait for the lock: a probe must not hold the thread that answers requests.
  sqlite.query("PRAGMA busy_timeout = 0").run();
  try {
    sqlite.query("BEGIN IMMEDIATE").run();
    sqlite.query("ROLLBACK").run();
  } catch (error) {
    // Another connection holds the write lock: it is writing, so the database takes writes.
    if (!isBusy(error)) return `${name} is not writable: ${(error as Error).message}`;
  } finally {
    sqlite.query(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`).run();
  }
  return undefined;
}

function migrationsNotCurrent(storage: Storage, name: string, migrations: readonly EmbeddedMigration[]): string | undefined {
  let latest: number;
  try {
    const row = storage.sqlite.query<{ latest: number | null }, []>(`SELECT max(created_at) AS latest FROM "__drizzle_migrations"`).get();
    latest = Number(row?.latest ?? 0);
  } catch (error) {
    return `${name}: its migrations cannot be read: ${(error as Error).message}`;
  }
  return migrationsVerdict(name, latest, migrations);
}

/** Why a database whose newest migration record is `latest` (its created_at; 0 for none) is not this version's, or undefined. */
export function migrationsVerdict(name: string, latest: number, migrations: readonly EmbeddedMigration[]): string | undefined {
  const expected = migrations.at(-1)?.createdAt ?? 0;
  if (latest < expected) return `${name} lacks migrations of this version: restart tollgate, which applies them.`;
  if (latest > expected) return `${name} has migrations of a newer tollgate version: run that version.`;
  return undefined;
}
