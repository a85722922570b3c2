/**
 * The data dir's files, private to the service's user: the dir 0700, every file 0600, and the
 * secrets (master.key, bootstrap-root-key) written whole or not at all. A secret is written under
 * a temporary name created exclusively (O_EXCL, 0600), synced, then put in place and the
 * directory synced: `link()`, which fails when the name exists, where racing processes must agree
 * on one file (the loser reads the winner's); `rename()` where the caller alone may write it.
 *
 * Nothing here opens a database or serve.lock once it exists (an O_EXCL create that fails opens
 * nothing): closing any descriptor of a file drops every POSIX lock this process holds on it,
 * SQLite's included (see instance-lock.ts).
 */
import { chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and its parents) when missing, the last one 0700. */
export function createPrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates `path` empty and 0600 unless something exists there; SQLite then gives its -wal and -shm the same mode. */
export function createEmptyPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, "wx", PRIVATE_FILE_MODE));
  } catch (error) {
    if (!isCode(error, "EEXIST")) throw error;
  }
}

/**
 * Writes `content` to `path` unless a file is there already, in which case that file is kept.
 * Returns the content of `path` afterwards: `content` when this call created it, else what is there.
 */
export function createFileOnce(path: string, content: string): { created: boolean; content: string } {
  const existing = readIfExists(path);
  if (existing !== undefined) return { created: false, content: existing };
  const temp = writeTempFile(path, content);
  try {
    linkSync(temp, path);
  } catch (error) {
    if (!isCode(error, "EEXIST")) throw error;
    return { created: false, content: readFileSync(path, "utf8") };
  } finally {
    rmSync(temp, { force: true });
  }
  syncPath(dirname(path));
  return { created: true, content };
}

/** Replaces `path` with a file holding `content` (0600) in one step: readers see the old file or the new one, whole. */
export function replaceFile(path: string, content: string): void {
  const temp = writeTempFile(path, content);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncPath(dirname(path));
}

/** A file with a fresh name beside `path`, holding `content` on disk (synced), 0600. */
function writeTempFile(path: string, content: string): string {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(temp, "wx", PRIVATE_FILE_MODE);
  try {
    const bytes = Buffer.from(content, "utf8");
    for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  return temp;
}

/** A file of the data dir that group or others had access to. */
export interface ExposedFile {
  name: string;
  /** Its permission bits before (e.g. 0o644). */
  modeBefore: number;
  /** Whether it is 0600 (or narrower) now: false when another user owns it. */
  narrowed: boolean;
}

/**
 * Data dirs of older versions: the dir to 0700 and each regular file in it to owner-only, where
 * this process owns them (another user's files are left as they are). Returns every file that
 * group or others had access to.
 */
export function tightenModes(dir: string): ExposedFile[] {
  const uid = process.getuid?.();
  const ownedByUs = (uidOfFile: number) => uid === undefined || uidOfFile === uid;
  const dirStat = statSync(dir);
  if (ownedByUs(dirStat.uid) && (dirStat.mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(dir, PRIVATE_DIR_MODE);
  const exposed: ExposedFile[] = [];
  for (const name of readdirSync(dir)) {
    const stat = statSync(join(dir, name), { throwIfNoEntry: false });
    if (!stat?.isFile() || (stat.mode & 0o077) === 0) continue;
    const narrowed = ownedByUs(stat.uid);
    if (narrowed) chmodSync(join(dir, name), stat.mode & PRIVATE_FILE_MODE);
    exposed.push({ name, modeBefore: stat.mode & 0o777, narrowed });
  }
  return exposed;
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if (isCode(error, "ENOENT")) return undefined;
    throw error;
  }
}

/** fsync of a file or directory by its path (a directory: the names created or renamed in it). */
export function syncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}
