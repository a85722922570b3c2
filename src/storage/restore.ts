/**
 * Restore: puts a backup's copies in place as a data dir's databases, the replaced ones kept beside.
 *
 * Each copy is checked before anything in the data dir changes (integrity, and that it is the
 * database it claims to be, not one a newer version wrote), then copied under a temporary name
 * beside its target, synced, and renamed over the target, so the name always holds a whole
 * database. The replaced file is first hard-linked to `<name>.replaced-<stamp>`, and its -wal and
 * -shm are renamed to that name's -wal and -shm: the kept copy stays whole (SQLite pairs a WAL
 * with its database by name), and nothing of the old WAL is replayed onto the restored file.
 * The caller holds the data dir's instance lock throughout, so no serve sees the files between steps.
 * The copies belong to the data dir's owner: root restoring for a service that runs as its own
 * user (systemd's DynamicUser) must leave files that user can open.
 */
import { Database } from "bun:sqlite";
import { chmodSync, chownSync, copyFileSync, existsSync, linkSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { unknownMigrations } from "./migrate.ts";
import type { EmbeddedMigration } from "./migrations.ts";
import { PRIVATE_FILE_MODE, syncPath } from "./private-files.ts";

export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreError";
  }
}

/** What a database file must be to stand in for one of the data dir's databases. */
export interface DatabaseKind {
  /** For messages: "tollgate.db". */
  name: string;
  /** Tables every version of it has. */
  tables: string[];
  migrations: EmbeddedMigration[];
}

/**
 * Throws RestoreError unless `file` is a sound SQLite database of `kind`, with no migration this
 * version does not know. Opens it read-only and writes nothing.
 */
export function checkBackupFile(file: string, kind: DatabaseKind): void {
  if (!existsSync(file)) throw new RestoreError(`${file} does not exist`);
  let db: Database;
  try {
    db = new Database(file, { readonly: true });
  } catch (e) {
    throw new RestoreError(`${file} cannot be opened as a database: ${(e as Error).message}`);
  }
  try {
    const problems = query<{ integrity_check: string }>(db, `${file} fails its integrity check`, "PRAGMA integrity_check").map((r) => r.integrity_check);
    if (problems.join() !== "ok") throw new RestoreError(`${file} fails its integrity check: ${problems.slice(0, 3).join("; ")}`);
    const tables = new Set(query<{ name: string }>(db, `${file} is not a readable SQLite database`, "SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => r.name));
    const missing = ["__drizzle_migrations", ...kind.tables].filter((t) => !tables.has(t));
    if (missing.length > 0) throw new RestoreError(`${file} is not a backup of ${kind.name}: it lacks the tables ${missing.join(", ")}`);
    const recorded = query<{ n: number }>(db, `${file} is not a readable SQLite database`, `SELECT count(*) AS n FROM "__drizzle_migrations"`)[0]?.n ?? 0;
    if (recorded === 0) throw new RestoreError(`${file} is not a backup of ${kind.name}: it records no migrations`);
    const unknown = unknownMigrations(db, kind.migrations);
    if (unknown.length > 0) throw new RestoreError(`${file} was written by a newer version of tollgate (${unknown.length} migration(s) this version does not know); restore it with that version`);
  } finally {
    db.close();
  }
}

/** Runs `sql` on `db`, turning SQLite's errors (not a database, malformed) into RestoreError(`problem: …`). */
function query<T>(db: Database, problem: string, sql: string): T[] {
  try {
    return db.query<T, []>(sql).all();
  } catch (e) {
    throw new RestoreError(`${problem}: ${(e as Error).message}`);
  }
}

/** One target of a restore: the data dir's database at `target`, from `source` (undefined: set it aside, restore nothing). */
export interface RestorePlan {
  target: string;
  source: string | undefined;
}

/**
 * Copies each source beside its target (synced, 0600), then replaces the targets one by one,
 * keeping each replaced file as `<target>.replaced-<stamp>`. Returns the kept files' paths.
 * On a failure before the first replacement, the copies are removed and nothing has changed.
 */
export function replaceDatabases(plans: RestorePlan[], stamp: string): string[] {
  const taken = plans.map(({ target }) => `${target}.replaced-${stamp}`).filter((kept) => existsSync(kept));
  if (taken.length > 0) throw new RestoreError(`${taken.join(", ")} already exists; run the restore again`);
  const staged = new Map<string, string>();
  try {
    for (const { target, source } of plans) if (source !== undefined) staged.set(target, stageCopy(source, target));
    const kept: string[] = [];
    for (const { target } of plans) {
      const keptFile = setAside(target, stamp);
      if (keptFile !== undefined) kept.push(keptFile);
      const copy = staged.get(target);
      if (copy !== undefined) renameSync(copy, target);
      else rmSync(target, { force: true });
      syncPath(dirname(target));
    }
    return kept;
  } finally {
    for (const copy of staged.values()) rmSync(copy, { force: true });
  }
}

/** A synced 0600 copy of `source` under a fresh name beside `target`, owned by the data dir's owner. */
function stageCopy(source: string, target: string): string {
  const copy = join(dirname(target), `.${basename(target)}.restore-${randomBytes(6).toString("hex")}.tmp`);
  copyFileSync(source, copy);
  chmodSync(copy, PRIVATE_FILE_MODE);
  giveToDirOwner(copy, dirname(target));
  syncPath(copy);
  return copy;
}

function giveToDirOwner(file: string, dir: string): void {
  const owner = statSync(dir);
  const mine = statSync(file);
  if (owner.uid === mine.uid && owner.gid === mine.gid) return;
  try {
    chownSync(file, owner.uid, owner.gid);
  } catch (e) {
    throw new RestoreError(`cannot give the restored files to the data dir's owner (uid ${owner.uid}): ${(e as Error).message}; run the restore as root or as that user`);
  }
}

/** Links `target` to its kept name and moves its -wal and -shm after it; returns the kept name, or undefined when there was no file. */
function setAside(target: string, stamp: string): string | undefined {
  if (!existsSync(target)) {
    for (const suffix of ["-wal", "-shm"]) rmSync(target + suffix, { force: true });
    return undefined;
  }
  const kept = `${target}.replaced-${stamp}`;
  linkSync(target, kept);
  for (const suffix of ["-wal", "-shm"]) {
    if (existsSync(target + suffix)) renameSync(target + suffix, kept + suffix);
  }
  return kept;
}

/** A file-name-safe UTC timestamp of `nowMs`, to the millisecond: 20261127T051449123Z. */
export function restoreStamp(nowMs: number): string {
  return new Date(nowMs).toISOString().replace(/[-:.]/g, "");
}
