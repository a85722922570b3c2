/** `tollgate migrate`: apply pending migrations and exit. */
import { openDataDir } from "../boot.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { EXIT, type CliIo } from "./io.ts";

export const MIGRATE_HELP = `tollgate migrate
  Applies pending database migrations in TOLLGATE_DATA_DIR and exits.`;

export function migrateCommand(config: Config, logger: Logger, io: CliIo): number {
  openDataDir(config, logger).close();
  io.stdout("database is up to date");
  return EXIT.ok;
}
