/** `tollgate migrate`: apply pending migrations and exit; `tollgate migrate-to-cluster`: a single box's records and analytics into the cluster. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { openDataDir } from "../boot.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../lib/logger.ts";
import { MASTER_KEY_FILE } from "../bootstrap.ts";
import { migratePostgres } from "../storage/pg/migrate.ts";
import { copyDataDirToPostgres, TargetNotEmptyError } from "../storage/pg/copy-from-sqlite.ts";
import { masterKeyFingerprint } from "../lib/key-fingerprint.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const MIGRATE_HELP = `tollgate migrate
  Applies pending database migrations in TOLLGATE_DATA_DIR (in the cluster mode, in PostgreSQL only) and exits.`;

export const MIGRATE_TO_CLUSTER_HELP = `tollgate migrate-to-cluster --from <data dir> [--replace]
  Copies the records of a single box (<data dir>/tollgate.db: workspaces, root keys, APIs, keys,
  permissions, roles, identities, overrides, credits, audit) and its analytics (<data dir>/analytics.db:
  verification events, rollups, totals, rate-limit decision counts) into the cluster's PostgreSQL
  (TOLLGATE_DATABASE_URL), in one transaction, while no serve uses <data dir>. Refuses a database
  that holds records or analytics unless --replace. The box's master key must be the cluster's
  TOLLGATE_MASTER_KEY, so that recoverable keys still decrypt; its fingerprint is recorded as the
  cluster's, which initialises the cluster as cluster-init would.`;

export async function migrateCommand(config: Config, logger: Logger, io: CliIo): Promise<number> {
  if (config.cluster) {
    // The records are in PostgreSQL: no SQLite file is created in the CLI's data dir.
    const applied = await migratePostgres(config.cluster.databaseUrl);
    if (applied.length > 0) logger.info("applied PostgreSQL migrations", { migrations: applied });
  } else {
    openDataDir(config, logger).close();
  }
  io.stdout("database is up to date");
  return EXIT.ok;
}

export async function migrateToClusterCommand(args: string[], config: Config, logger: Logger, io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { from: { type: "string" }, replace: { type: "boolean" } });
  if (positionals.length > 0) throw new UsageError("migrate-to-cluster takes no arguments (the data dir is --from)");
  const from = values.from;
  if (typeof from !== "string" || from === "") throw new UsageError("--from <data dir> is required");
  if (!config.cluster) {
    io.stderr("error: migrate-to-cluster copies into the cluster's PostgreSQL: set TOLLGATE_DATABASE_URL and TOLLGATE_REDIS_URL as the nodes have them");
    return EXIT.failure;
  }
  const keyFile = join(from, MASTER_KEY_FILE);
  if (existsSync(keyFile) && !sameKey(readFileSync(keyFile, "utf8"), config.masterKey!)) {
    io.stderr(`error: ${keyFile} is not TOLLGATE_MASTER_KEY: the cluster could not decrypt this box's recoverable keys; give the nodes the box's key (its content) as TOLLGATE_MASTER_KEY and copy again. Nothing was copied`);
    return EXIT.config;
  }
  const applied = await migratePostgres(config.cluster.databaseUrl);
  if (applied.length > 0) logger.info("applied PostgreSQL migrations", { migrations: applied });
  let copied: Record<string, number>;
  try {
    copied = await copyDataDirToPostgres(from, config.cluster.databaseUrl, { replace: values.replace === true, fingerprint: masterKeyFingerprint(config.masterKey!) });
  } catch (error) {
    if (!(error instanceof TargetNotEmptyError)) throw error;
    io.stderr(`error: the PostgreSQL database already holds records (in ${error.tables.join(", ")}); nothing was copied. Copy into an empty database, or run again with --replace to delete its records and analytics first.`);
    return EXIT.config;
  }
  for (const [table, rows] of Object.entries(copied)) io.stdout(`${table}\t${rows}`);
  io.stderr(`copied the records and analytics of ${from} into PostgreSQL`);
  return EXIT.ok;
}

function sameKey(fileText: string, key: Uint8Array): boolean {
  return Buffer.from(fileText.trim(), "base64").equals(Buffer.from(key));
}
