/** `tollgate backup <file>`: a consistent online copy of the database (VACUUM INTO), safe while serve runs. */
import { existsSync } from "node:fs";
import { openDataDir } from "../boot.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const BACKUP_HELP = `tollgate backup <file>
  Writes a consistent copy of the database to <file> (which must not exist) while the service runs.`;

export function backupCommand(args: string[], config: Config, logger: Logger, io: CliIo): number {
  const { positionals } = parse(args, {});
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new UsageError("backup takes exactly one <file>");
  if (existsSync(file)) throw new UsageError(`${file} already exists; choose a new file`);
  const storage = openDataDir(config, logger);
  try {
    storage.sqlite.run("VACUUM INTO ?", [file]);
  } finally {
    storage.close();
  }
  io.stdout(file);
  return EXIT.ok;
}
