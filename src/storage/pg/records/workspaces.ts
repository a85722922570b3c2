/**
 * The records of workspaces and their root keys on PostgreSQL (cluster mode), as records/workspaces.ts
 * answers: names compared by lower() under COLLATE "C", which folds ASCII letters only, as SQLite's
 * lower() does; ids in byte order.
 */
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { byBytes, rethrowPgDuplicate, type PgDb } from "../db.ts";
import { rootKeys, workspaces } from "../schema/index.ts";
import type {
  NewRootKey, RootKeyCredential, RootKeyRecord, RootKeyStore, WorkspaceRecord, WorkspaceStore,
} from "../../records/workspaces.ts";

const WORKSPACE = { id: workspaces.id, name: workspaces.name, analyticsEnabled: workspaces.analyticsEnabled, createdAt: workspaces.createdAt };
const ROOT_KEY = {
  id: rootKeys.id, name: rootKeys.name, start: rootKeys.start, permissions: rootKeys.permissions,
  createdAt: rootKeys.createdAt, expiresAt: rootKeys.expiresAt, revokedAt: rootKeys.revokedAt,
};
const CREDENTIAL = {
  id: rootKeys.id, name: rootKeys.name, workspaceId: rootKeys.workspaceId, permissions: rootKeys.permissions, enabled: rootKeys.enabled,
  expiresAt: rootKeys.expiresAt, revokedAt: rootKeys.revokedAt, workspaceEnabled: workspaces.enabled,
};

export class PgWorkspaceStore implements WorkspaceStore {
  constructor(private readonly db: PgDb) {}

  async findByIdOrName(idOrName: string): Promise<WorkspaceRecord | undefined> {
    const [row] = await this.db.select(WORKSPACE).from(workspaces)
      .where(sql`${workspaces.id} = ${idOrName} or lower(${workspaces.name} COLLATE "C") = lower(${idOrName} COLLATE "C")`)
      .orderBy(sql`${workspaces.id} = ${idOrName} desc`).limit(1);
    return row;
  }

  async list(): Promise<WorkspaceRecord[]> {
    return this.db.select(WORKSPACE).from(workspaces).orderBy(asc(workspaces.createdAt), asc(byBytes(workspaces.id)));
  }

  async any(): Promise<boolean> {
    const rows = await this.db.select({ id: workspaces.id }).from(workspaces).limit(1);
    return rows.length > 0;
  }

  async insert(workspace: WorkspaceRecord): Promise<void> {
    await rethrowPgDuplicate(async () => {
      await this.db.insert(workspaces).values(workspace);
    });
  }

  async setAnalytics(workspaceId: string, enabled: boolean, nowMs: number): Promise<void> {
    await this.db.update(workspaces).set({ analyticsEnabled: enabled, updatedAt: nowMs }).where(eq(workspaces.id, workspaceId));
  }
}

export class PgRootKeyStore implements RootKeyStore {
  constructor(private readonly db: PgDb) {}

  async insert(rootKey: NewRootKey): Promise<void> {
    await rethrowPgDuplicate(async () => {
      await this.db.insert(rootKeys).values(rootKey);
    });
  }

  async list(workspaceId: string): Promise<RootKeyRecord[]> {
    return this.db.select(ROOT_KEY).from(rootKeys).where(eq(rootKeys.workspaceId, workspaceId))
      .orderBy(asc(rootKeys.createdAt), asc(byBytes(rootKeys.id)));
  }

  async findUnrevoked(id: string): Promise<{ id: string; workspaceId: string; name: string } | undefined> {
    const [row] = await this.db.select({ id: rootKeys.id, workspaceId: rootKeys.workspaceId, name: rootKeys.name }).from(rootKeys)
      .where(and(eq(rootKeys.id, id), isNull(rootKeys.revokedAt)));
    return row;
  }

  async revoke(id: string, nowMs: number): Promise<void> {
    await this.db.update(rootKeys).set({ revokedAt: nowMs }).where(eq(rootKeys.id, id));
  }

  async findByHash(hash: string): Promise<RootKeyCredential | undefined> {
    const [row] = await this.db.select(CREDENTIAL).from(rootKeys).innerJoin(workspaces, eq(workspaces.id, rootKeys.workspaceId))
      .where(eq(rootKeys.hash, hash));
    return row;
  }
}
