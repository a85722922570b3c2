/**
 * Workspaces (tenants) and their root keys. Operators manage them from the CLI; the HTTP API only
 * authenticates with root keys. Root keys are stored as base64(SHA-256) and shown once.
 * Invariants: workspace names are unique case-insensitively; a revoked root key never authenticates.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";
import { rootKeys, workspaces } from "../../storage/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, randomKeyPart } from "../../lib/ids.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { AppError } from "../../errors/app-error.ts";
import { recordAudit } from "../audit/index.ts";
import { isValidGrant, type Actor, type Principal } from "../auth/index.ts";

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

const ROOT_KEY_PREFIX = "tg_root";

/** What a root key learns about itself (rootKeys.whoami). */
export interface RootKeyIdentity {
  rootKeyId: string;
  name: string;
  workspace: { id: string; name: string };
  /** Its grants, `apis.` ones also as `api.`, sorted. */
  permissions: string[];
  /** recording: verifications are recorded (TOLLGATE_ANALYTICS); querying: the workspace opted in to analytics queries. */
  analytics: { recording: boolean; querying: boolean };
}

export class WorkspaceService {
  /** `onChange` runs after every committed change, so cached root-key principals are dropped. */
  /** `recordsVerifications`: whether verifications are recorded for analytics at all (TOLLGATE_ANALYTICS; default on). */
  constructor(private readonly deps: { storage: Storage; clock: Clock; onChange?: () => void; recordsVerifications?: boolean }) {}

  /** rootKeys.whoami: the calling root key, its workspace, its grants and whether analytics can show anything. */
  whoami(principal: Principal): RootKeyIdentity {
    const ws = this.get(principal.workspaceId);
    return {
      rootKeyId: principal.rootKeyId,
      name: principal.actor.name ?? "",
      workspace: { id: ws.id, name: ws.name },
      permissions: [...principal.permissions].sort(),
      analytics: { recording: this.deps.recordsVerifications ?? true, querying: ws.analyticsEnabled },
    };
  }

  private write<T>(fn: () => T): T {
    const result = inTransaction(this.deps.storage, fn);
    this.deps.onChange?.();
    return result;
  }

  /** Creates a workspace; 409-style AppError when the name is taken. */
  create(input: { name: string; analyticsEnabled?: boolean }, actor: Actor): WorkspaceRecord {
    const name = input.name.trim();
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
      throw new AppError("invalid_input", { detail: "A workspace name is 1 to 64 letters, digits, '_', '.' or '-'." });
    }
    const now = this.deps.clock.now();
    return this.write(() => {
      if (this.findByIdOrName(name)) {
        throw new AppError("precondition_failed", { detail: `A workspace named '${name}' already exists.` });
      }
      const row = { id: newId("ws"), name, analyticsEnabled: input.analyticsEnabled ?? false, createdAt: now };
      this.deps.storage.db.insert(workspaces).values(row).run();
      recordAudit(this.deps.storage.db, {
        workspaceId: row.id, event: "workspace.create", actor, timeMs: now,
        resources: [{ type: "workspace", id: row.id, name }], description: `Created workspace ${name}`,
      });
      return row;
    });
  }

  list(): WorkspaceRecord[] {
    return this.deps.storage.db
      .select({ id: workspaces.id, name: workspaces.name, analyticsEnabled: workspaces.analyticsEnabled, createdAt: workspaces.createdAt })
      .from(workspaces).orderBy(workspaces.createdAt, workspaces.id).all();
  }

  /** Finds a workspace by id, or by name case-insensitively. */
  findByIdOrName(idOrName: string): WorkspaceRecord | undefined {
    return this.deps.storage.db
      .select({ id: workspaces.id, name: workspaces.name, analyticsEnabled: workspaces.analyticsEnabled, createdAt: workspaces.createdAt })
      .from(workspaces)
      .where(sql`${workspaces.id} = ${idOrName} or lower(${workspaces.name}) = lower(${idOrName})`)
      .get();
  }

  /** Like findByIdOrName, but a missing workspace is an AppError. */
  get(idOrName: string): WorkspaceRecord {
    const ws = this.findByIdOrName(idOrName);
    if (!ws) throw new AppError("workspace_not_found", { detail: `No workspace has the id or name '${idOrName}'.` });
    return ws;
  }

  setAnalytics(idOrName: string, enabled: boolean, actor: Actor): WorkspaceRecord {
    const now = this.deps.clock.now();
    return this.write(() => {
      const ws = this.get(idOrName);
      this.deps.storage.db.update(workspaces).set({ analyticsEnabled: enabled, updatedAt: now }).where(eq(workspaces.id, ws.id)).run();
      recordAudit(this.deps.storage.db, {
        workspaceId: ws.id, event: "workspace.update", actor, timeMs: now,
        resources: [{ type: "workspace", id: ws.id, name: ws.name }],
        description: `Turned analytics ${enabled ? "on" : "off"}`,
      });
      return { ...ws, analyticsEnabled: enabled };
    });
  }

  /**
   * Creates a root key in a workspace. `value` is used as the key string when given (bootstrap from
   * TOLLGATE_ROOT_KEY); otherwise one is generated. Returns the id and the only copy of the key.
   */
  createRootKey(input: { workspace: string; name: string; permissions: string[]; expiresAt?: number; value?: string }, actor: Actor): { id: string; key: string } {
    const bad = input.permissions.filter((p) => !isValidGrant(p));
    if (bad.length > 0) {
      throw new AppError("invalid_input", { detail: `Permissions must look like <resource>.<id|*>.<action>: ${bad.join(", ")}` });
    }
    const key = input.value ?? `${ROOT_KEY_PREFIX}_${randomKeyPart(24)}`;
    const now = this.deps.clock.now();
    return this.write(() => {
      const ws = this.get(input.workspace);
      const id = newId("rk");
      this.deps.storage.db.insert(rootKeys).values({
        id, workspaceId: ws.id, name: input.name, hash: sha256Base64(key), start: key.slice(0, ROOT_KEY_PREFIX.length + 5),
        permissions: [...new Set(input.permissions)], expiresAt: input.expiresAt ?? null, createdAt: now,
      }).run();
      recordAudit(this.deps.storage.db, {
        workspaceId: ws.id, event: "root_key.create", actor, timeMs: now,
        resources: [{ type: "root_key", id, name: input.name }], description: `Created root key ${input.name}`,
      });
      return { id, key };
    });
  }

  /**
   * First start: when no workspace exists yet, creates `default` and a root key holding `permissions`
   * (its value `value`, else generated) in one transaction, so two processes opening an empty data dir
   * at once bootstrap exactly once. `keep` receives the key before the commit; if it throws, nothing
   * is stored. Returns whether it bootstrapped.
   */
  bootstrapDefault(input: { permissions: string[]; value?: string }, actor: Actor, keep: (key: string) => void): boolean {
    return this.write(() => {
      if (this.deps.storage.db.select({ id: workspaces.id }).from(workspaces).limit(1).get()) return false;
      this.create({ name: "default" }, actor);
      const { key } = this.createRootKey({ workspace: "default", name: "bootstrap", ...input }, actor);
      keep(key);
      return true;
    });
  }

  listRootKeys(workspace: string): RootKeyRecord[] {
    const ws = this.get(workspace);
    return this.deps.storage.db
      .select({ id: rootKeys.id, name: rootKeys.name, start: rootKeys.start, permissions: rootKeys.permissions, createdAt: rootKeys.createdAt, expiresAt: rootKeys.expiresAt, revokedAt: rootKeys.revokedAt })
      .from(rootKeys).where(eq(rootKeys.workspaceId, ws.id)).orderBy(rootKeys.createdAt, rootKeys.id).all();
  }

  /** Revokes a root key by id; revoking twice is an error so scripts notice a typo. */
  revokeRootKey(id: string, actor: Actor): void {
    const now = this.deps.clock.now();
    this.write(() => {
      const row = this.deps.storage.db.select().from(rootKeys).where(and(eq(rootKeys.id, id), isNull(rootKeys.revokedAt))).get();
      if (!row) throw new AppError("key_not_found", { detail: `No live root key has the id '${id}'.` });
      this.deps.storage.db.update(rootKeys).set({ revokedAt: now }).where(eq(rootKeys.id, id)).run();
      recordAudit(this.deps.storage.db, {
        workspaceId: row.workspaceId, event: "root_key.revoke", actor, timeMs: now,
        resources: [{ type: "root_key", id, name: row.name }], description: `Revoked root key ${row.name}`,
      });
    });
  }
}
