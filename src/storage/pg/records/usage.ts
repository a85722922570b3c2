/**
 * The PostgreSQL twin of records/usage.ts. `lock` takes the workspace's usage row's lock (made first
 * if missing), so creators of one workspace's records count one after another at any
 * isolation level: under READ COMMITTED the row lock waits for the other creator's commit and reads
 * its counts; under REPEATABLE READ or SERIALIZABLE a row changed since the snapshot aborts the
 * transaction (40001), which clusterRecords runs again.
 */
import { eq, sql } from "drizzle-orm";
import type { PgDb } from "../db.ts";
import { workspaceUsage } from "../schema/index.ts";
import { NO_USAGE, type UsageStore, type WorkspaceUsage } from "../../records/usage.ts";

const COLUMNS = {
  keys: workspaceUsage.keys, identities: workspaceUsage.identities, permissions: workspaceUsage.permissions,
  roles: workspaceUsage.roles, namespaces: workspaceUsage.namespaces, bytes: workspaceUsage.bytes,
};

export class PgUsageStore implements UsageStore {
  constructor(private readonly db: PgDb) {}

  async read(workspaceId: string): Promise<WorkspaceUsage> {
    const [row] = await this.db.select(COLUMNS).from(workspaceUsage).where(eq(workspaceUsage.workspaceId, workspaceId));
    return row ?? NO_USAGE;
  }

  /** One statement: the upsert's update of a row that is there takes its lock as FOR UPDATE would, and returns its counts. */
  async lock(workspaceId: string): Promise<WorkspaceUsage> {
    const [row] = await this.db.insert(workspaceUsage).values({ workspaceId })
      .onConflictDoUpdate({ target: workspaceUsage.workspaceId, set: { workspaceId: sql`excluded.workspace_id` } })
      .returning(COLUMNS);
    return row ?? NO_USAGE;
  }
}
