/** `tollgate backup <file>`: consistent online copies of both databases, safe while serve runs. */
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { backupDatabase, BackupError } from "../storage/backup.ts";
import { ANALYTICS_DATABASE_FILE, DATABASE_FILE } from "../storage/data-dir.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const BACKUP_HELP = `tollgate backup <file>
  Writes a consistent copy of tollgate.db (keys, credits, permissions, rate limits, audit log) to
  <file>, and one of analytics.db (verification events and rollups) beside it, named as <file> with
  "-analytics" before a final ".db" (tollgate-backup.db: tollgate-backup-analytics.db). Neither may
  exist; both are mode 0600. Safe while the service runs. Restore: stop the service, run
  'tollgate restore <file>', start. Recoverable keys also need the same master key: keep
  <data dir>/master.key (or TOLLGATE_MASTER_KEY) with the backup.`;

/** Where the copy of analytics.db goes for a backup written to `file`. */
export function analyticsBackupPath(file: string): string {
  return file.endsWith(".db") ? `${file.slice(0, -".db".length)}-analytics.db` : `${file}-analytics`;
}

export function backupCommand(args: string[], config: Config, logger: Logger, io: CliIo): number {
  const { positionals } = parse(args, {});
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("backup takes exactly one <file>");
  const target = resolve(file);
  const analyticsTarget = analyticsBackupPath(target);
  for (const path of [target, analyticsTarget]) {
    if (existsSync(path)) throw new UsageError(`${path} already exists; choose a new file`);
  }
  const dbPath = join(config.dataDir, DATABASE_FILE);
  const analyticsPath = join(config.dataDir, ANALYTICS_DATABASE_FILE);
  // A data dir last opened by a version before analytics.db keeps the analytics in tollgate.db.
  const separateAnalytics = existsSync(analyticsPath);
  try {
    backupDatabase(dbPath, target);
    try {
      if (separateAnalytics) backupDatabase(analyticsPath, analyticsTarget);
    } catch (e) {
      // Both or neither: a backup without its analytics half would restore an empty history.
      rmSync(target, { force: true });
      throw e;
    }
  } catch (e) {
    if (!(e instanceof BackupError)) throw e;
    io.stderr(`error: ${e.message}`);
    return EXIT.failure;
  }
  logger.info("backup written", { file: target, ...(separateAnalytics ? { analytics: analyticsTarget } : {}), from: config.dataDir });
  const masterKey = join(config.dataDir, "master.key");
  if (config.masterKey === undefined && existsSync(masterKey)) {
    io.stderr(`note: recoverable keys also need ${masterKey}; keep a copy of it with the backup`);
  }
  io.stdout(file);
  return EXIT.ok;
}
