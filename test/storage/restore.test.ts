/**
 * replaceDatabases in-process: a replaced database whose latest commits are still in its -wal (as a
 * serve killed with SIGKILL leaves it) is kept whole under its new name, and that WAL is not
 * replayed onto the restored file. The restored file belongs to the data dir's owner (root restoring
 * for a service that runs as its own user).
 */
import { afterEach, expect, test } from "bun:test";
import { chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { replaceDatabases, restoreStamp, RestoreError } from "../../src/storage/restore.ts";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Writes a WAL database at `path` holding `values`, the last of them only in its -wal (copied while a connection holds it open). */
function walDatabase(scratch: string, path: string, values: string[]): void {
  const db = new Database(join(scratch, "live.db"), { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA wal_autocheckpoint = 0");
  db.run("CREATE TABLE t (v TEXT)");
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  for (const v of values) db.run("INSERT INTO t VALUES (?)", [v]);
  copyFileSync(join(scratch, "live.db"), path);
  copyFileSync(join(scratch, "live.db-wal"), `${path}-wal`);
  db.close();
}

function values(path: string): string[] {
  const db = new Database(path);
  try {
    return db.query<{ v: string }, []>("SELECT v FROM t ORDER BY v").all().map((r) => r.v);
  } finally {
    db.close();
  }
}

test("the replaced file keeps its WAL's commits under the kept name; the restored file gets none of them", () => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-restore-"));
  const scratch = mkdtempSync(join(dir, "scratch-"));
  const target = join(dir, "tollgate.db");
  walDatabase(scratch, target, ["old-1", "old-2"]);
  const backup = join(dir, "backup.db");
  const db = new Database(backup, { create: true });
  db.run("CREATE TABLE t (v TEXT)");
  db.run("INSERT INTO t VALUES ('restored')");
  db.close();

  const stamp = restoreStamp(Date.UTC(2026, 10, 27, 5, 14, 49, 7));
  expect(stamp).toBe("20261127T051449007Z");
  expect(replaceDatabases([{ target, source: backup }], stamp)).toEqual([`${target}.replaced-${stamp}`]);
  expect(existsSync(`${target}-wal`)).toBe(false);
  expect(values(target)).toEqual(["restored"]);
  expect(values(`${target}.replaced-${stamp}`)).toEqual(["old-1", "old-2"]);
});

test("a kept name that exists already: RestoreError before anything changes", () => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-restore-"));
  const target = join(dir, "tollgate.db");
  const backup = join(dir, "backup.db");
  for (const path of [target, backup, `${target}.replaced-x`]) new Database(path, { create: true }).close();
  const before = readdirSync(dir).sort();
  expect(() => replaceDatabases([{ target, source: backup }], "x")).toThrow(RestoreError);
  expect(readdirSync(dir).sort()).toEqual(before);
});

test.skipIf(process.getuid?.() !== 0)("as root, into a data dir another user owns: the restored file is that user's, 0600", () => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-restore-"));
  const dataDir = join(dir, "data");
  const backup = join(dir, "backup.db");
  new Database(backup, { create: true }).close();
  mkdirSync(dataDir, { mode: 0o700 });
  chownSync(dataDir, 65534, 65534);
  const target = join(dataDir, "tollgate.db");
  replaceDatabases([{ target, source: backup }], "owner");
  const restored = statSync(target);
  expect({ uid: restored.uid, gid: restored.gid, mode: restored.mode & 0o777 }).toEqual({ uid: 65534, gid: 65534, mode: 0o600 });
});
