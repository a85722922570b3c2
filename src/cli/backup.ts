/** `tollgate backup <file>`: a consistent online copy of the database, safe while serve runs. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { backupDatabase, BackupError } from "../storage/backup.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const BACKUP_HELP = `tollgate backup <file>
  Writes a consistent copy of the database to <file> (which must not exist, mode 0600) while the
  service runs. Restore: stop the service, put the copy in place as tollgate.db (no -wal or -shm
  beside it), start. Recoverable keys also need the same master key: keep <data dir>/master.key
  (or TOLLGATE_MASTER_KEY) with the backup.`;

export function backupCommand(args: string[], config: Config, logger: Logger, io: CliIo): number {
  const { positionals } = parse(args, {});
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("backup takes exactly one <file>");
  if (existsSync(file)) throw new UsageError(`${file} already exists; choose a new file`);
  const dbPath = join(config.dataDir, "tollgate.db");
  try {
    backupDatabase(dbPath, resolve(file));
  } catch (e) {
    if (!(e instanceof BackupError)) throw e;
    io.stderr(`error: ${e.message}`);
    return EXIT.failure;
  }
  logger.info("backup written", { file: resolve(file), from: dbPath });
  const masterKey = join(config.dataDir, "master.key");
  if (config.masterKey === undefined && existsSync(masterKey)) {
    io.stderr(`note: recoverable keys also need ${masterKey}; keep a copy of it with the backup`);
  }
  io.stdout(file);
  return EXIT.ok;
}
