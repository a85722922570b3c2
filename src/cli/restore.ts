/**
 * `tollgate restore <backup>`: puts what `tollgate backup <backup>` wrote back in place as the data
 * dir's databases, holding serve's instance lock throughout so that no serve runs on them meanwhile.
 * A backup without its analytics half comes from a data dir that kept the analytics in tollgate.db;
 * analytics.db is then set aside too, so the next start copies the backup's analytics out again.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import type { Clock } from "../lib/clock.ts";
import { ANALYTICS_DATABASE_FILE, DATABASE_FILE } from "../storage/data-dir.ts";
import { DataDirInUseError, lockDataDir } from "../storage/instance-lock.ts";
import { ANALYTICS_MIGRATIONS, MIGRATIONS } from "../storage/migrations.ts";
import { createPrivateDir } from "../storage/private-files.ts";
import { checkBackupFile, replaceDatabases, RestoreError, restoreStamp, type DatabaseKind } from "../storage/restore.ts";
import { parse } from "./args.ts";
import { analyticsBackupPath } from "./backup.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const RESTORE_HELP = `tollgate restore <backup>
  Replaces the data dir's databases with a backup written by 'tollgate backup <backup>' (and its
  "-analytics" file beside it). Refuses while a serve runs on the data dir; checks the backup first
  and changes nothing when it is damaged or not a tollgate backup. The replaced files are kept beside
  as <name>.replaced-<UTC time>. Keep the master.key of the backup's time in the data dir.`;

const MAIN_KIND: DatabaseKind = { name: DATABASE_FILE, tables: ["workspaces", "root_keys", "apis", "keys"], migrations: MIGRATIONS };
const ANALYTICS_KIND: DatabaseKind = { name: ANALYTICS_DATABASE_FILE, tables: ["verification_event_batches"], migrations: ANALYTICS_MIGRATIONS };

export function restoreCommand(args: string[], config: Config, logger: Logger, clock: Clock, io: CliIo): number {
  const { positionals } = parse(args, {});
  if (positionals.length !== 1) throw new UsageError("restore takes exactly one <backup>");
  const backup = resolve(positionals[0]!);
  const analyticsBackup = analyticsBackupPath(backup);
  const hasAnalytics = existsSync(analyticsBackup);
  try {
    checkBackupFile(backup, MAIN_KIND);
    if (hasAnalytics) checkBackupFile(analyticsBackup, ANALYTICS_KIND);
  } catch (e) {
    return failure(e, io);
  }
  createPrivateDir(config.dataDir);
  let lock;
  try {
    lock = lockDataDir(config.dataDir);
  } catch (e) {
    if (!(e instanceof DataDirInUseError)) throw e;
    io.stderr(`error: ${e.message}; stop it before restoring`);
    return EXIT.failure;
  }
  try {
    const kept = replaceDatabases([
      { target: join(config.dataDir, DATABASE_FILE), source: backup },
      { target: join(config.dataDir, ANALYTICS_DATABASE_FILE), source: hasAnalytics ? analyticsBackup : undefined },
    ], restoreStamp(clock.now()));
    logger.info("backup restored", { from: backup, ...(hasAnalytics ? { analytics: analyticsBackup } : {}), into: config.dataDir, kept });
  } catch (e) {
    return failure(e, io);
  } finally {
    lock.release();
  }
  io.stdout(`restored ${backup} into ${config.dataDir}`);
  return EXIT.ok;
}

function failure(e: unknown, io: CliIo): number {
  if (!(e instanceof RestoreError)) throw e;
  io.stderr(`error: ${e.message}; nothing was changed`);
  return EXIT.failure;
}
