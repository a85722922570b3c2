/** `tollgate serve`: run the HTTP service until SIGTERM/SIGINT, then stop gracefully. */
import { boot } from "../boot.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { EXIT, type CliIo } from "./io.ts";

export const SERVE_HELP = `tollgate serve
  Runs the HTTP service (the default command). Reads TOLLGATE_* from the environment.
  On first start it creates workspace 'default' and a bootstrap root key.`;

export async function serveCommand(config: Config, logger: Logger, io: CliIo): Promise<number> {
  const running = await boot({ config, logger });
  const signal = await io.stopRequested();
  logger.info("stopping", { signal });
  await running.stop();
  logger.info("stopped");
  return EXIT.ok;
}
