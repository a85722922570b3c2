/**
 * What a cluster node refuses to start on, each with exit 78 (cli/index.ts) and a message naming the
 * variable, command or flag that settles it: a database no `tollgate cluster-init` (or
 * `migrate-to-cluster`) prepared, a master key other than the cluster's, a data dir that holds a
 * single box's records. Each of these would otherwise start and serve wrongly without a word
 * (an empty cluster on a mistyped database name, recoverable keys that no longer decrypt, a box's
 * keys silently gone).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SQL } from "bun";
import type { ClusterConfig, Config } from "./config.ts";
import { matchesFingerprint } from "./lib/key-fingerprint.ts";
import { DATABASE_FILE } from "./storage/data-dir.ts";
import { readClusterState } from "./storage/pg/cluster-settings.ts";

/** A start refused for how it was set up, not for a passing fault: exit 78, which systemd does not restart. */
export class StartRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartRefused";
  }
}

/** The database's name in TOLLGATE_DATABASE_URL, for messages (never the URL: it may hold a password). */
export function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.replace(/^\//, "")) || "(the user's default)";
  } catch {
    return "(unreadable)";
  }
}

/**
 * Refuses a database that is not an initialised cluster, or whose master key fingerprint is not
 * `masterKey`'s. Reads only: a mistyped database is left as it was (not even migrated).
 */
export async function refuseUninitialisedCluster(sql: SQL, cluster: ClusterConfig, masterKey: Uint8Array): Promise<void> {
  const state = await readClusterState(sql);
  const name = `PostgreSQL database "${databaseName(cluster.databaseUrl)}" (TOLLGATE_DATABASE_URL)`;
  if (!state.hasWorkspace) {
    throw new StartRefused(`${name} holds no tollgate cluster: initialise it once with \`tollgate cluster-init\` `
      + "(or copy a single box into it with `tollgate migrate-to-cluster --from <data dir>`). A node never creates "
      + "the first workspace itself, so that a mistyped database name cannot start an empty cluster.");
  }
  if (state.fingerprint === undefined) {
    throw new StartRefused(`${name} holds workspaces but no fingerprint of the cluster's master key (it was set up `
      + "by an earlier version): run `tollgate cluster-init --adopt` once, with the TOLLGATE_MASTER_KEY every node has.");
  }
  if (!matchesFingerprint(masterKey, state.fingerprint)) {
    throw new StartRefused(`TOLLGATE_MASTER_KEY is not the master key of the cluster in ${name} (its fingerprint `
      + "there differs): give this node the key the other nodes have; with another key, recoverable keys would "
      + "not decrypt. Only if the cluster's key was changed on purpose, `tollgate cluster-init --adopt` records this one.");
  }
}

/** Refuses to serve in the cluster mode from a data dir that holds a single box's records, unless told to. */
export function refuseBoxDatabase(config: Config, cluster: ClusterConfig): void {
  const file = join(config.dataDir, DATABASE_FILE);
  if (cluster.ignoreBoxDatabase || !existsSync(file)) return;
  throw new StartRefused(`${file} is a single box's database, and a cluster node (TOLLGATE_DATABASE_URL) does not read it: `
    + `to move its records into the cluster, stop its serve and run \`tollgate migrate-to-cluster --from ${config.dataDir}\`, `
    + "then move tollgate.db out of the data dir (or give the node another data dir). To serve without it, "
    + "set TOLLGATE_CLUSTER_IGNORE_BOX_DATABASE=on.");
}
