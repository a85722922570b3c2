/**
 * The records of workspaces and their root keys, as the services read and write them: the interfaces
 * both backends implement, and the embedded ones on drizzle over SQLite (PostgreSQL's: pg/records).
 * Names compare by lower(), which folds ASCII letters only, as the unique index on lower(name) does.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../db.ts";
import type { Maybe } from "../work.ts";
import { rootKeys, workspaces } from "../schema/index.ts";
import { rethrowDuplicate } from "./errors.ts";

export interface WorkspaceRecord {
  id: string;
  name: string;
  analyticsEnabled: boolean;
  createdAt: number;
}

export interface RootKeyRecord {
  id: string;
  name: string;
  start: string;
  permissions: string[];
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

export interface NewRootKey {
  id: string;
  workspaceId: string;
  name: string;
  /** base64(SHA-256) of the key string. */
  hash: string;
  start: string;
  permissions: string[];
  expiresAt: number | null;
  createdAt: number;
}

/** A stored root key as authentication needs it, with its workspace's state. */
export interface RootKeyCredential {
  id: string;
  name: string;
  workspaceId: string;
  permissions: string[];
  enabled: boolean;
  expiresAt: number | null;
  revokedAt: number | null;
  workspaceEnabled: boolean;
}

export interface WorkspaceStore {
  /** The workspace with this id, else the one whose name equals it ignoring ASCII case. */
  findByIdOrName(idOrName: string): Maybe<WorkspaceRecord | undefined>;
  /** Every workspace, oldest first (ties by id in byte order). */
  list(): Maybe<WorkspaceRecord[]>;
  /** Whether any workspace exists. */
  any(): Maybe<boolean>;
  /** Inserts a workspace; DuplicateRecord when its name is taken ignoring ASCII case. */
  insert(workspace: WorkspaceRecord): Maybe<void>;
  setAnalytics(workspaceId: string, enabled: boolean, nowMs: number): Maybe<void>;
}

export interface RootKeyStore {
  /** Inserts a root key; DuplicateRecord when its hash is stored already. */
  insert(rootKey: NewRootKey): Maybe<void>;
  /** The workspace's root keys, oldest first (ties by id in byte order), revoked ones too. */
  list(workspaceId: string): Maybe<RootKeyRecord[]>;
  /** The root key with this id unless it is revoked. */
  findUnrevoked(id: string): Maybe<{ id: string; workspaceId: string; name: string } | undefined>;
  revoke(id: string, nowMs: number): Maybe<void>;
  /** The root key whose hash this is, revoked and expired ones too (authentication tells them apart). */
  findByHash(hash: string): Maybe<RootKeyCredential | undefined>;
}

const WORKSPACE = { id: workspaces.id, name: workspaces.name, analyticsEnabled: workspaces.analyticsEnabled, createdAt: workspaces.createdAt };
const ROOT_KEY = {
  id: rootKeys.id, name: rootKeys.name, start: rootKeys.start, permissions: rootKeys.permissions,
  createdAt: rootKeys.createdAt, expiresAt: rootKeys.expiresAt, revokedAt: rootKeys.revokedAt,
};
const CREDENTIAL = {
  id: rootKeys.id, name: rootKeys.name, workspaceId: rootKeys.workspaceId, permissions: rootKeys.permissions, enabled: rootKeys.enabled,
  expiresAt: rootKeys.expiresAt, revokedAt: rootKeys.revokedAt, workspaceEnabled: workspaces.enabled,
};

export class SqliteWorkspaceStore implements WorkspaceStore {
  constructor(private readonly db: Db) {}

  findByIdOrName(idOrName: string): WorkspaceRecord | undefined {
    return this.db.select(WORKSPACE).from(workspaces)
      .where(sql`${workspaces.id} = ${idOrName} or lower(${workspaces.name}) = lower(${idOrName})`)
      .orderBy(sql`${workspaces.id} = ${idOrName} desc`).get();
  }

  list(): WorkspaceRecord[] {
    return this.db.select(WORKSPACE).from(workspaces).orderBy(workspaces.createdAt, workspaces.id).all();
  }

  any(): boolean {
    return this.db.select({ id: workspaces.id }).from(workspaces).limit(1).get() !== undefined;
  }

  insert(workspace: WorkspaceRecord): void {
    rethrowDuplicate(() => this.db.insert(workspaces).values(workspace).run());
  }

  setAnalytics(workspaceId: string, enabled: boolean, nowMs: number): void {
    this.db.update(workspaces).set({ analyticsEnabled: enabled, updatedAt: nowMs }).where(eq(workspaces.id, workspaceId)).run();
  }
}

export class SqliteRootKeyStore implements RootKeyStore {
  constructor(private readonly db: Db) {}

  insert(rootKey: NewRootKey): void {
    rethrowDuplicate(() => this.db.insert(rootKeys).values(rootKey).run());
  }

  list(workspaceId: string): RootKeyRecord[] {
    return this.db.select(ROOT_KEY).from(rootKeys).where(eq(rootKeys.workspaceId, workspaceId)).orderBy(rootKeys.createdAt, rootKeys.id).all();
  }

  findUnrevoked(id: string): { id: string; workspaceId: string; name: string } | undefined {
    return this.db.select({ id: rootKeys.id, workspaceId: rootKeys.workspaceId, name: rootKeys.name }).from(rootKeys)
      .where(and(eq(rootKeys.id, id), isNull(rootKeys.revokedAt))).get();
  }

  revoke(id: string, nowMs: number): void {
    this.db.update(rootKeys).set({ revokedAt: nowMs }).where(eq(rootKeys.id, id)).run();
  }

  findByHash(hash: string): RootKeyCredential | undefined {
    return this.db.select(CREDENTIAL).from(rootKeys).innerJoin(workspaces, eq(workspaces.id, rootKeys.workspaceId))
      .where(eq(rootKeys.hash, hash)).get();
  }
}
