/**
 * Workspaces (tenants) and their root keys. Operators manage them from the CLI; the HTTP API only
 * authenticates with root keys. Root keys are stored as base64(SHA-256) and shown once.
 * Invariants: workspace names are unique ignoring ASCII case; a revoked root key never authenticates.
 * Ids and key strings are made before a unit runs, so a unit run again (cluster) writes the same ones.
 */
import { DuplicateRecord, type RecordBackend, type Records, type RootKeyRecord, type WorkspaceRecord } from "../../storage/records/index.ts";
import { step, then, thenMaybe, type Maybe, type Work } from "../../storage/work.ts";
import type { Clock } from "../../lib/clock.ts";
import { newId, randomKeyPart } from "../../lib/ids.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { AppError } from "../../errors/app-error.ts";
import { writeAudit } from "../audit/index.ts";
import { isValidGrant, type Actor, type Principal } from "../auth/index.ts";
import { DEFAULT_QUOTAS, readQuotaUses, type QuotaUse, type WorkspaceQuotas } from "../quotas/index.ts";

export type { RootKeyCredential, RootKeyRecord, WorkspaceRecord } from "../../storage/records/index.ts";

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
  /** The workspace's use of each quota against its limit (storage in bytes). */
  quotas: QuotaUse[];
}

interface NewRootKeyInput {
  workspace: string;
  name: string;
  permissions: string[];
  expiresAt?: number;
  value?: string;
}

/** The root key to create, its id and key string made once, before the unit that stores it. */
interface PreparedRootKey {
  input: NewRootKeyInput;
  id: string;
  key: string;
}

/** The workspace with this id, or named so ignoring ASCII case; 404 `workspace_not_found` when none. */
export function* workspaceIn(r: Records, idOrName: string): Work<WorkspaceRecord> {
  const ws = yield* step(r.workspaces.findByIdOrName(idOrName));
  if (!ws) throw new AppError("workspace_not_found", { detail: `No workspace has the id or name '${idOrName}'.` });
  return ws;
}

function* createWorkspaceIn(r: Records, row: WorkspaceRecord, actor: Actor): Work<WorkspaceRecord> {
  const taken = () => new AppError("precondition_failed", { detail: `A workspace named '${row.name}' already exists.` });
  if (yield* step(r.workspaces.findByIdOrName(row.name))) throw taken();
  try {
    yield r.workspaces.insert(row);
  } catch (error) {
    // Another transaction took the name after this one looked (cluster).
    if (error instanceof DuplicateRecord) throw taken();
    throw error;
  }
  yield writeAudit(r, {
    workspaceId: row.id, event: "workspace.create", actor, timeMs: row.createdAt,
    resources: [{ type: "workspace", id: row.id, name: row.name }], description: `Created workspace ${row.name}`,
  });
  return row;
}

function* createRootKeyIn(r: Records, rootKey: PreparedRootKey, actor: Actor, nowMs: number): Work<{ id: string; key: string }> {
  const { input, id, key } = rootKey;
  const ws = yield* workspaceIn(r, input.workspace);
  yield r.rootKeys.insert({
    id, workspaceId: ws.id, name: input.name, hash: sha256Base64(key), start: key.slice(0, ROOT_KEY_PREFIX.length + 5),
    permissions: [...new Set(input.permissions)], expiresAt: input.expiresAt ?? null, createdAt: nowMs,
  });
  yield writeAudit(r, {
    workspaceId: ws.id, event: "root_key.create", actor, timeMs: nowMs,
    resources: [{ type: "root_key", id, name: input.name }], description: `Created root key ${input.name}`,
  });
  return { id, key };
}

function preparedRootKey(input: NewRootKeyInput): PreparedRootKey {
  const bad = input.permissions.filter((p) => !isValidGrant(p));
  if (bad.length > 0) {
    throw new AppError("invalid_input", { detail: `Permissions must look like <resource>.<id|*>.<action>: ${bad.join(", ")}` });
  }
  return { input, id: newId("rk"), key: input.value ?? `${ROOT_KEY_PREFIX}_${randomKeyPart(24)}` };
}

export class WorkspaceService {
  /** `onChange` runs after every committed change, so cached root-key principals are dropped. */
  /** `recordsVerifications`: whether verifications are recorded for analytics at all (TOLLGATE_ANALYTICS; default on). */
  constructor(private readonly deps: {
    records: RecordBackend; clock: Clock; onChange?: () => void; recordsVerifications?: boolean;
    /** The workspace quotas whoami shows use against; DEFAULT_QUOTAS when left out. */
    quotas?: WorkspaceQuotas;
  }) {}

  /** rootKeys.whoami: the calling root key, its workspace, its grants and whether analytics can show anything. */
  whoami(principal: Principal): Maybe<RootKeyIdentity> {
    const quotas = readQuotaUses(this.deps.records, this.deps.quotas ?? DEFAULT_QUOTAS, principal.workspaceId);
    return thenMaybe(this.get(principal.workspaceId), (ws) => then(quotas, (uses) => ({
      rootKeyId: principal.rootKeyId,
      name: principal.actor.name ?? "",
      workspace: { id: ws.id, name: ws.name },
      permissions: [...principal.permissions].sort(),
      analytics: { recording: this.deps.recordsVerifications ?? true, querying: ws.analyticsEnabled },
      quotas: uses,
    })));
  }

  /** Runs a unit that changes workspaces or root keys; onChange once it committed. */
  private change<T>(workspaceId: string | null, unit: (r: Records) => Work<T>): Maybe<T> {
    return then(this.deps.records.write(workspaceId, unit), (result) => {
      this.deps.onChange?.();
      return result;
    });
  }

  /** Creates a workspace; 412-style AppError when the name is taken. */
  create(input: { name: string; analyticsEnabled?: boolean }, actor: Actor): Maybe<WorkspaceRecord> {
    const name = input.name.trim();
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
      throw new AppError("invalid_input", { detail: "A workspace name is 1 to 64 letters, digits, '_', '.' or '-'." });
    }
    const row = { id: newId("ws"), name, analyticsEnabled: input.analyticsEnabled ?? false, createdAt: this.deps.clock.now() };
    return this.change(row.id, (r) => createWorkspaceIn(r, row, actor));
  }

  list(): Maybe<WorkspaceRecord[]> {
    return this.deps.records.read((r) => step(r.workspaces.list()));
  }

  /** Finds a workspace by id, or by name ignoring ASCII case. */
  findByIdOrName(idOrName: string): Maybe<WorkspaceRecord | undefined> {
    return this.deps.records.read((r) => step(r.workspaces.findByIdOrName(idOrName)));
  }

  /** Like findByIdOrName, but a missing workspace is an AppError. */
  get(idOrName: string): Maybe<WorkspaceRecord> {
    return this.deps.records.read((r) => workspaceIn(r, idOrName));
  }

  setAnalytics(idOrName: string, enabled: boolean, actor: Actor): Maybe<WorkspaceRecord> {
    const now = this.deps.clock.now();
    // The workspace is known only inside the unit; the change is recorded for the one it finds.
    return thenMaybe(this.get(idOrName), (found) => this.change(found.id, function* (r) {
      const ws = yield* workspaceIn(r, found.id);
      yield r.workspaces.setAnalytics(ws.id, enabled, now);
      yield writeAudit(r, {
        workspaceId: ws.id, event: "workspace.update", actor, timeMs: now,
        resources: [{ type: "workspace", id: ws.id, name: ws.name }],
        description: `Turned analytics ${enabled ? "on" : "off"}`,
      });
      return { ...ws, analyticsEnabled: enabled };
    }));
  }

  /**
   * Creates a root key in a workspace. `value` is used as the key string when given (bootstrap from
   * TOLLGATE_ROOT_KEY); otherwise one is generated. Returns the id and the only copy of the key.
   */
  createRootKey(input: NewRootKeyInput, actor: Actor): Maybe<{ id: string; key: string }> {
    const rootKey = preparedRootKey(input);
    const now = this.deps.clock.now();
    return thenMaybe(this.get(input.workspace), (ws) => this.change(ws.id, (r) => createRootKeyIn(r, rootKey, actor, now)));
  }

  /**
   * First start: when no workspace exists yet, creates `default` and a root key holding `permissions`
   * (its value `value`, else generated) in one transaction, so two processes opening an empty data dir
   * at once bootstrap exactly once. `keep` receives the key before the commit; if it throws, nothing
   * is stored (a unit run again hands it the same key). Returns whether it bootstrapped.
   */
  bootstrapDefault(input: { permissions: string[]; value?: string }, actor: Actor, keep: (key: string) => void): Maybe<boolean> {
    const now = this.deps.clock.now();
    const workspace = { id: newId("ws"), name: "default", analyticsEnabled: false, createdAt: now };
    const rootKey = preparedRootKey({ workspace: "default", name: "bootstrap", ...input });
    return this.change(workspace.id, function* (r) {
      // Nodes starting together on an empty database: the first bootstraps, the others then find its workspace.
      yield r.locks.hold({ workspaceId: "", kind: "workspace", id: "bootstrap" });
      if (yield* step(r.workspaces.any())) return false;
      yield* createWorkspaceIn(r, workspace, actor);
      const { key } = yield* createRootKeyIn(r, rootKey, actor, now);
      keep(key);
      return true;
    });
  }

  listRootKeys(workspace: string): Maybe<RootKeyRecord[]> {
    return this.deps.records.read(function* (r) {
      const ws = yield* workspaceIn(r, workspace);
      return yield* step(r.rootKeys.list(ws.id));
    });
  }

  /** Revokes a root key by id; revoking twice is an error so scripts notice a typo. */
  revokeRootKey(id: string, actor: Actor): Maybe<void> {
    const now = this.deps.clock.now();
    const missing = () => new AppError("key_not_found", { detail: `No live root key has the id '${id}'.` });
    return thenMaybe(this.deps.records.read((r) => step(r.rootKeys.findUnrevoked(id))), (found) => {
      if (!found) throw missing();
      return this.change(found.workspaceId, function* (r) {
        yield r.locks.hold({ workspaceId: found.workspaceId, kind: "rootKey", id });
        const row = yield* step(r.rootKeys.findUnrevoked(id));
        if (!row) throw missing();
        yield r.rootKeys.revoke(id, now);
        yield writeAudit(r, {
          workspaceId: row.workspaceId, event: "root_key.revoke", actor, timeMs: now,
          resources: [{ type: "root_key", id, name: row.name }], description: `Revoked root key ${row.name}`,
        });
      });
    });
  }
}
