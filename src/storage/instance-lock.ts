/**
 * One `serve` per data dir: an exclusive lock on `<data dir>/serve.lock`, taken before any database
 * is opened and held until stop() or the end of the process.
 *
 * The lock is the one SQLite takes on a database file (a POSIX fcntl lock), held by a connection to
 * the lock file in exclusive locking mode. Why this and not flock(2): bun:ffi needs a JIT compiler
 * and the arm64 executable also runs under qemu-user, while SQLite is in the executable already;
 * the kernel releases the lock when the process ends however it ends (SIGKILL included), so a
 * crash never leaves a stale lock; and SQLite keeps its connections' locks apart inside one
 * process, so a second lock fails there too (tests boot several instances in one process).
 * The holder's PID is the one /proc/locks shows for the lock file's inode.
 *
 * A POSIX lock is dropped when its process closes any descriptor of the file: nothing else in
 * the process may open serve.lock (chmod and stat by path are fine).
 */
import { Database } from "bun:sqlite";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isBusy } from "./db.ts";
import { createEmptyPrivateFile } from "./private-files.ts";

export const LOCK_FILE = "serve.lock";

/** Another `serve` (in this process or another) holds the data dir. */
export class DataDirInUseError extends Error {
  constructor(readonly dataDir: string, readonly holderPid: number | undefined) {
    super(`the data dir ${dataDir} is in use by another tollgate serve (${holderPid ? `PID ${holderPid}` : "its PID is not visible here"}); only one may run on a data dir`);
    this.name = "DataDirInUseError";
  }
}

export interface InstanceLock {
  /** Releases the lock (once; later calls do nothing). */
  release(): void;
}

/**
 * Takes the lock of `dataDir` (which must exist) without waiting, or throws DataDirInUseError.
 * Writes nothing when another holds it (the lock file is created empty, 0600, when missing).
 */
export function lockDataDir(dataDir: string): InstanceLock {
  const file = join(dataDir, LOCK_FILE);
  createEmptyPrivateFile(file);
  const sqlite = new Database(file, { readwrite: true, create: false });
  try {
    sqlite.run("PRAGMA busy_timeout = 0");
    // Exclusive locking mode keeps the lock after COMMIT; a journal in memory leaves no -journal file.
    sqlite.run("PRAGMA locking_mode = EXCLUSIVE");
    sqlite.run("PRAGMA journal_mode = MEMORY");
    sqlite.run("BEGIN EXCLUSIVE");
    sqlite.run("COMMIT");
  } catch (error) {
    sqlite.close();
    if (isBusy(error)) throw new DataDirInUseError(dataDir, holderPid(file));
    throw error;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      sqlite.close();
    },
  };
}

/** The PID holding a write lock on `file`, from /proc/locks (Linux); undefined when none is visible. */
function holderPid(file: string): number | undefined {
  try {
    const inode = statSync(file, { bigint: true }).ino;
    // "1: POSIX  ADVISORY  WRITE 4242 fe:00:2148705 1073741824 1073742335"; waiters' lines have "->".
    // Matched by inode alone: on overlayfs, stat's device is not the one /proc/locks shows.
    for (const line of readFileSync("/proc/locks", "utf8").split("\n")) {
      const match = /^\d+:\s+\w+\s+\w+\s+WRITE\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
      if (match && BigInt(match[2]!) === inode && Number(match[1]) > 0) return Number(match[1]);
    }
  } catch {
    // No /proc/locks (not Linux, or hidden as under the systemd unit's ProcSubset=pid).
  }
  return undefined;
}
