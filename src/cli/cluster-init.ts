/**
 * `tollgate cluster-init`: makes an empty PostgreSQL database a cluster, the one step a node never
 * takes by itself (so that a mistyped database name refuses to start instead of serving an empty
 * cluster): the migrations, workspace `default` with its bootstrap root key, and the fingerprint of
 * TOLLGATE_MASTER_KEY that every node then checks (cluster-refusals.ts). The tests initialise their
 * clusters through initialiseCluster too.
 */
import type { ClusterConfig, Config } from "../config.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/logger.ts";
import { masterKeyFingerprint } from "../lib/key-fingerprint.ts";
import { openClusterServices } from "../boot-cluster.ts";
import { bootstrapWorkspace } from "../bootstrap.ts";
import { databaseName, StartRefused } from "../cluster-refusals.ts";
import { readClusterState, recordFingerprint } from "../storage/pg/cluster-settings.ts";
import { parse } from "./args.ts";
import { EXIT, UsageError, type CliIo } from "./io.ts";

export const CLUSTER_INIT_HELP = `tollgate cluster-init [--adopt]
  Initialises the cluster's PostgreSQL database (TOLLGATE_DATABASE_URL), once, before the first node
  starts: applies the migrations, creates workspace 'default' and its bootstrap root key
  (TOLLGATE_ROOT_KEY, or generated into <data dir>/bootstrap-root-key) and records the fingerprint
  of TOLLGATE_MASTER_KEY, which every node must then hold. Refuses a database that already holds
  workspaces; --adopt records this master key's fingerprint there instead (a cluster set up by an
  earlier version, or whose key was changed on purpose) and creates nothing.`;

export interface InitOutcome {
  /** Whether workspace `default` was created (false: --adopt on a database that had workspaces). */
  created: boolean;
  /** Where the bootstrap root key was written, when it was generated. */
  keyFile?: string;
}

/** Initialises the cluster's database as the command does; throws StartRefused for what it refuses. */
export async function initialiseCluster(config: Config, cluster: ClusterConfig, clock: Clock, logger: Logger, opts: { adopt?: boolean } = {}): Promise<InitOutcome> {
  const node = await openClusterServices(config, cluster, clock, logger, { initialising: true });
  try {
    const state = await readClusterState(node.sql);
    const fingerprint = masterKeyFingerprint(config.masterKey!);
    const name = `PostgreSQL database "${databaseName(cluster.databaseUrl)}"`;
    if (state.fingerprint !== undefined && state.fingerprint !== fingerprint && !opts.adopt) {
      throw new StartRefused(`${name} is a cluster with another master key than TOLLGATE_MASTER_KEY: nothing was changed. `
        + "Give this command the key the nodes have; only if the cluster's key was changed on purpose, --adopt records this one.");
    }
    if (state.hasWorkspace && !opts.adopt) {
      throw new StartRefused(`${name} is initialised already (it holds workspaces): nothing was changed. `
        + "--adopt records the fingerprint of TOLLGATE_MASTER_KEY there (a cluster set up by an earlier version) and creates nothing.");
    }
    if (state.fingerprint !== fingerprint) await recordFingerprint(node.sql, fingerprint, clock.now());
    if (state.hasWorkspace) return { created: false };
    const first = await bootstrapWorkspace(node.services.workspaces, config.dataDir, config.rootKey);
    return first.keyFile ? { created: first.created, keyFile: first.keyFile } : { created: first.created };
  } finally {
    await node.close();
  }
}

export async function clusterInitCommand(args: string[], config: Config, clock: Clock, logger: Logger, io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { adopt: { type: "boolean" } });
  if (positionals.length > 0) throw new UsageError("cluster-init takes no arguments");
  if (!config.cluster) {
    io.stderr("error: cluster-init initialises the cluster's PostgreSQL: set TOLLGATE_DATABASE_URL and TOLLGATE_REDIS_URL as the nodes have them");
    return EXIT.failure;
  }
  const outcome = await initialiseCluster(config, config.cluster, clock, logger, { adopt: values.adopt === true });
  if (!outcome.created) io.stderr("recorded the fingerprint of TOLLGATE_MASTER_KEY as the cluster's; no workspace was created");
  else if (outcome.keyFile) io.stderr(`initialised the cluster: workspace 'default', its bootstrap root key in ${outcome.keyFile}`);
  else io.stderr("initialised the cluster: workspace 'default', its bootstrap root key from TOLLGATE_ROOT_KEY");
  return EXIT.ok;
}
