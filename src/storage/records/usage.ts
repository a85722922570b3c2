/**
 * What each workspace's records take, for its quotas: the row of `workspace_usage`, which the
 * database's triggers keep (migration 0012: live records per kind, and their bytes as
 * services/quotas documents them), so every path that writes records counts, the CLI's included.
 * The store only reads it; `lock` is how a unit that creates serializes with the others of its
 * workspace before it counts (the SQLite twin needs nothing more: its write transaction is the
 * file's only writer).
 */
import { eq } from "drizzle-orm";
import type { Db } from "../db.ts";
import { workspaceUsage } from "../schema/index.ts";
import type { Maybe } from "../work.ts";

export interface WorkspaceUsage {
  keys: number;
  identities: number;
  permissions: number;
  roles: number;
  namespaces: number;
  /** Bytes of the workspace's records as the triggers count them. */
  bytes: number;
}

export const NO_USAGE: WorkspaceUsage = { keys: 0, identities: 0, permissions: 0, roles: 0, namespaces: 0, bytes: 0 };

export interface UsageStore {
  /** The workspace's usage (zeros when it has no record yet). */
  read(workspaceId: string): Maybe<WorkspaceUsage>;
  /**
   * The workspace's usage, taking the lock that creators of its records take before they count:
   * inside a write unit, held to its end. Never on a path that only reads or deletes.
   */
  lock(workspaceId: string): Maybe<WorkspaceUsage>;
}

const USAGE_COLUMNS = {
  keys: workspaceUsage.keys, identities: workspaceUsage.identities, permissions: workspaceUsage.permissions,
  roles: workspaceUsage.roles, namespaces: workspaceUsage.namespaces, bytes: workspaceUsage.bytes,
};

export class SqliteUsageStore implements UsageStore {
  constructor(private readonly db: Db) {}

  read(workspaceId: string): WorkspaceUsage {
    return this.db.select(USAGE_COLUMNS).from(workspaceUsage).where(eq(workspaceUsage.workspaceId, workspaceId)).get() ?? NO_USAGE;
  }

  lock(workspaceId: string): WorkspaceUsage {
    return this.read(workspaceId);
  }
}
