/**
 * What a node checks of the cluster's database before it serves (src/cluster-refusals.ts): whether
 * it was initialised (a workspace, and the master key's fingerprint in `cluster_settings`), and the
 * fingerprint itself; and the write of that fingerprint by `cluster-init` and `migrate-to-cluster`.
 * Read with to_regclass first: a mistyped database has none of the tables, and is read, never
 * migrated, before the node refuses it.
 */
import type { SQL } from "bun";

/** The row of `cluster_settings` that holds the master key's fingerprint (lib/key-fingerprint.ts). */
export const MASTER_KEY_FINGERPRINT = "master_key_fingerprint";

export interface ClusterState {
  /** Whether the database has tollgate's tables at all (any migration applied). */
  migrated: boolean;
  /** Whether any workspace exists. */
  hasWorkspace: boolean;
  /** The master key's fingerprint, once recorded. */
  fingerprint?: string;
}

/** The database's state as a node sees it at start; reads only, and never fails on a database without the tables. */
export async function readClusterState(sql: SQL): Promise<ClusterState> {
  const [tables] = await sql`SELECT to_regclass('public.workspaces') IS NOT NULL AS workspaces, to_regclass('public.cluster_settings') IS NOT NULL AS settings`;
  if (!tables.workspaces) return { migrated: false, hasWorkspace: false };
  const [workspace] = await sql`SELECT EXISTS (SELECT 1 FROM workspaces) AS found`;
  const state: ClusterState = { migrated: true, hasWorkspace: workspace.found === true };
  if (!tables.settings) return state;
  const [row] = await sql`SELECT value FROM cluster_settings WHERE name = ${MASTER_KEY_FINGERPRINT}`;
  return row ? { ...state, fingerprint: String(row.value) } : state;
}

/** Records `fingerprint` as the cluster's, replacing one recorded before. */
export async function recordFingerprint(sql: SQL, fingerprint: string, nowMs: number): Promise<void> {
  await sql`INSERT INTO cluster_settings (name, value, set_at_ms) VALUES (${MASTER_KEY_FINGERPRINT}, ${fingerprint}, ${nowMs})
    ON CONFLICT (name) DO UPDATE SET value = excluded.value, set_at_ms = excluded.set_at_ms`;
}
