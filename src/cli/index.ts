/**
 * The CLI: argv → command → exit code (0 ok, 1 failure, 2 usage, 78 configuration or a database
 * written by a newer version). Commands that create something print the new value alone on
 * stdout; messages go to stderr.
 */
import type { ServicesCommand } from "./scope.ts";
import pkg from "../../package.json";
import { ConfigError, loadConfig, CONFIG_VARIABLES, type ClusterConfig, type Config } from "../config.ts";
import { openClusterServices } from "../boot-cluster.ts";
import { StartRefused } from "../cluster-refusals.ts";
import { createLogger, resolveLogFormat, type Logger } from "../lib/logger.ts";
import { AppError } from "../errors/app-error.ts";
import { bootstrapDataDir, buildServices, openDataDir } from "../boot.ts";
import { systemClock } from "../lib/clock.ts";
import { DatabaseTooNewError } from "../storage/migrate.ts";
import type { Actor } from "../services/auth/index.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";
import { parseCommandLine } from "./command-line.ts";
import { SERVE_HELP, serveCommand } from "./serve.ts";
import { CLUSTER_INIT_HELP, clusterInitCommand } from "./cluster-init.ts";
import { MIGRATE_HELP, MIGRATE_TO_CLUSTER_HELP, migrateCommand, migrateToClusterCommand } from "./migrate.ts";
import { WORKSPACE_HELP, workspaceCommand } from "./workspace.ts";
import { ROOT_KEY_HELP, rootKeyCommand } from "./root-key.ts";
import { BACKUP_HELP, backupCommand } from "./backup.ts";
import { RESTORE_HELP, restoreCommand } from "./restore.ts";
import { CONFIG_HELP, configCommand } from "./config.ts";
import { COMPLETION_HELP, completionCommand } from "./completion.ts";
import { READY_HELP, readyCommand } from "./ready.ts";
import { API_HELP, apiCommand } from "./api.ts";
import { KEY_HELP, keyCommand } from "./key.ts";
import { STATS_HELP, statsCommand } from "./stats.ts";

export { EXIT, type CliIo } from "./io.ts";

const HELP: Record<string, string> = {
  serve: SERVE_HELP, migrate: MIGRATE_HELP, "migrate-to-cluster": MIGRATE_TO_CLUSTER_HELP, "cluster-init": CLUSTER_INIT_HELP, workspace: WORKSPACE_HELP, "root-key": ROOT_KEY_HELP, api: API_HELP, key: KEY_HELP,
  stats: STATS_HELP, backup: BACKUP_HELP, restore: RESTORE_HELP, config: CONFIG_HELP, completion: COMPLETION_HELP, ready: READY_HELP,
  version: "tollgate version\n  Prints the version.",
};

function usage(): string {
  const vars = CONFIG_VARIABLES.map(([n, d]) => `  ${n.padEnd(31)} ${d}`).join("\n");
  return `tollgate ${pkg.version}: API keys, verification and rate limiting in one program

Usage: tollgate <command> [flags]   (tollgate <command> --help for details)

Commands:
${Object.values(HELP).join("\n\n").replace(/^/gm, "  ")}

Environment:
${vars}

Exit codes: 0 ok, 1 failure, 2 usage error, 78 configuration error (or a database written by a newer version).`;
}

const CLI_ACTOR: Actor = { type: "cli", id: "cli", name: "tollgate CLI" };

/**
 * Runs one command over the data dir's services, closing the database afterwards. An empty data dir
 * is bootstrapped first, as `serve` would, so `root-key create --workspace default` works before the
 * first `serve` and a workspace created first does not suppress the bootstrap. The credit journal is
 * loaded as `serve` loads it, so balances shown and changed here count a running server's spends.
 */
async function withServices(config: Config, logger: Logger, run: ServicesCommand): Promise<number> {
  if (config.cluster) return withClusterServices(config, config.cluster, logger, run);
  const dataDir = openDataDir(config, logger);
  try {
    const services = buildServices(dataDir, config, systemClock);
    bootstrapDataDir(services, config, logger);
    services.credits.restore();
    return await run(services);
  } finally {
    dataDir.close();
  }
}

/** In the cluster mode, the same commands over the cluster's records (refused, as a node is, on a database cluster-init did not prepare). */
async function withClusterServices(config: Config, cluster: ClusterConfig, logger: Logger, run: ServicesCommand): Promise<number> {
  const node = await openClusterServices(config, cluster, systemClock, logger);
  try {
    return await run(node.services);
  } finally {
    await node.close();
  }
}

/** Commands that work on a data dir's SQLite files, which hold no records in the cluster mode. */
const EMBEDDED_ONLY: Record<string, string> = {
  backup: "back up the cluster's PostgreSQL database instead (pg_dump)",
  restore: "restore the cluster's PostgreSQL database instead (pg_restore)",
};

async function dispatch(command: string, rest: string[], config: Config, logger: Logger, io: CliIo): Promise<number> {
  if (config.cluster && command in EMBEDDED_ONLY) {
    io.stderr(`error: ${command} works on a data dir's own database, and in the cluster mode (TOLLGATE_DATABASE_URL) the records are in PostgreSQL: ${EMBEDDED_ONLY[command]}`);
    return EXIT.failure;
  }
  switch (command) {
    case "serve":
      if (rest.length > 0) throw new UsageError("serve takes no arguments; configure it with TOLLGATE_* variables");
      return serveCommand(config, logger, io);
    case "migrate":
      if (rest.length > 0) throw new UsageError("migrate takes no arguments");
      return migrateCommand(config, logger, io);
    case "cluster-init":
      return clusterInitCommand(rest, config, systemClock, logger, io);
    case "migrate-to-cluster":
      return migrateToClusterCommand(rest, config, logger, io);
    case "workspace":
      return withServices(config, logger, workspaceCommand(rest, CLI_ACTOR, io));
    case "root-key":
      return withServices(config, logger, rootKeyCommand(rest, CLI_ACTOR, io));
    case "api":
      return withServices(config, logger, apiCommand(rest, CLI_ACTOR, io));
    case "key":
      return withServices(config, logger, keyCommand(rest, CLI_ACTOR, io));
    case "stats":
      return withServices(config, logger, statsCommand(rest, config, CLI_ACTOR, io));
    case "backup":
      return backupCommand(rest, config, logger, io);
    case "restore":
      return restoreCommand(rest, config, logger, systemClock, io);
    case "config":
      return configCommand(rest, io);
    case "completion":
      return completionCommand(rest, HELP, io);
    case "ready":
      return readyCommand(rest, config, systemClock, io);
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

/** Runs the CLI with `argv` (without the program name) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const line = parseCommandLine(argv);
  if (line.kind === "usage") {
    io.stdout(usage());
    return EXIT.ok;
  }
  if (line.kind === "version") {
    io.stdout(pkg.version);
    return EXIT.ok;
  }
  if (line.kind === "help") {
    const help = HELP[line.command];
    if (!help) return usageFailure(io, `unknown command '${line.command}'`);
    io.stdout(help);
    return EXIT.ok;
  }
  const { command, rest } = line;
  let config: Config;
  try {
    config = loadConfig(io.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      io.stderr(e.message);
      return EXIT.config;
    }
    throw e;
  }
  const logger = createLogger(config.logLevel, io.stderr, resolveLogFormat(config.logFormat, io.stderrIsTerminal === true));
  try {
    return await dispatch(command, rest, config, logger, io);
  } catch (e) {
    if (e instanceof UsageError) return usageFailure(io, e.message, HELP[command]);
    // Like a bad setting, a database written by a newer version fails every start the same way:
    // exit 78, which the systemd unit does not restart.
    // So is a start the cluster refuses (cluster-refusals.ts): the message says what to change.
    if (e instanceof DatabaseTooNewError || e instanceof StartRefused) {
      io.stderr(`error: ${e.message}`);
      return EXIT.config;
    }
    if (e instanceof AppError) {
      io.stderr(`error: ${e.detail}`);
      return EXIT.failure;
    }
    io.stderr(`error: ${(e as Error).message}`);
    // Where it failed, for whoever runs it again at debug level; the message above is for everyone.
    logger.debug("failure", { stack: (e as Error).stack });
    return EXIT.failure;
  }
}

function usageFailure(io: CliIo, message: string, help?: string): number {
  io.stderr(`error: ${message}`);
  io.stderr(help ?? "Run 'tollgate help' for the commands.");
  return EXIT.usage;
}
