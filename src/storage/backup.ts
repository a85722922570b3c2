/**
 * Online backup: a consistent snapshot of tollgate.db while the service reads and writes it.
 * VACUUM INTO copies inside one read transaction, so the copy is the database as of one moment
 * (WAL frames included) and the service is never blocked: in WAL mode readers and the writer do not
 * wait for each other. The copy is written under a temporary name beside the target, checked,
 * synced and only then linked to `file`, which fails rather than replace a file that appeared
 * meanwhile: `file` is either a complete backup or absent, and nothing is overwritten.
 */
import { Database } from "bun:sqlite";
import { closeSync, existsSync, linkSync, openSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { PRIVATE_FILE_MODE, syncPath } from "./private-files.ts";

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupError";
  }
}

/** Writes a snapshot of the database at `dbPath` to `file` (mode 0600: it holds key hashes). Never migrates or creates `dbPath`. */
export function backupDatabase(dbPath: string, file: string): void {
  if (!existsSync(dbPath)) throw new BackupError(`there is no database at ${dbPath}; is TOLLGATE_DATA_DIR right?`);
  if (existsSync(file)) throw new BackupError(`${file} already exists; choose a new file`);
  const partial = `${file}.partial-${process.pid}`;
  // Created empty first so that the copy never exists with wider permissions; VACUUM INTO accepts an empty file.
  closeSync(openSync(partial, "wx", PRIVATE_FILE_MODE));
  try {
    // Read-write (not readonly): a reader of a WAL database needs to write its shared-memory index.
    const source = new Database(dbPath, { readwrite: true, create: false });
    try {
      source.run("PRAGMA busy_timeout = 5000");
      source.run("VACUUM INTO ?", [partial]);
    } finally {
      source.close();
    }
    checkCopy(partial);
    // SQLite does not sync what VACUUM INTO writes; a backup that a power cut can truncate is none.
    syncPath(partial);
    linkSync(partial, file);
    syncPath(dirname(file));
  } finally {
    rmSync(partial, { force: true });
  }
}

function checkCopy(file: string): void {
  const copy = new Database(file, { readonly: true });
  try {
    const result = copy.query<{ quick_check: string }, []>("PRAGMA quick_check").all().map((r) => r.quick_check);
    if (result.join() !== "ok") throw new BackupError(`the copy failed its integrity check: ${result.slice(0, 3).join("; ")}`);
  } finally {
    copy.close();
  }
}
