/**
 * The storage seam: every record store the services use, and the backend that runs their units of
 * work (storage/work.ts) in a transaction. The embedded backend is drizzle over the SQLite file,
 * answering synchronously so that an embedded request never waits on a promise; the cluster one
 * (pg/records) is drizzle over PostgreSQL. A service written against `RecordBackend` does not know
 * which one it runs on; test/storage/records/ holds both to the same answers.
 */
import { inTransaction, type Db, type Storage } from "../db.ts";
import { runNow, type Maybe, type Work } from "../work.ts";
import { SqliteApiStore, type ApiStore } from "./apis.ts";
export { SqliteApiStore } from "./apis.ts";
import { SqliteAuditStore, type AuditStore } from "./audit.ts";
export { SqliteAuditStore } from "./audit.ts";
import { SqliteIdentityStore, SqliteRatelimitConfigStore, type IdentityStore, type RatelimitConfigStore } from "./identities.ts";
import { SqliteRbacStore, type RbacStore } from "./rbac.ts";
export { SqliteIdentityStore, SqliteRatelimitConfigStore } from "./identities.ts";
export { SqliteRbacStore } from "./rbac.ts";
import { SqliteRootKeyStore, SqliteWorkspaceStore, type RootKeyStore, type WorkspaceStore } from "./workspaces.ts";
export { SqliteRootKeyStore, SqliteWorkspaceStore } from "./workspaces.ts";
import { SqliteNamespaceStore, SqliteOverrideStore, type NamespaceStore, type OverrideStore } from "./ratelimits.ts";
export { SqliteNamespaceStore, SqliteOverrideStore } from "./ratelimits.ts";
import { SqliteKeyStore, type KeyStore } from "./keys.ts";
export { SqliteKeyStore } from "./keys.ts";
import { SqliteUsageStore, type UsageStore } from "./usage.ts";
export { NO_USAGE, type UsageStore, type WorkspaceUsage } from "./usage.ts";
import { SqliteRecordLocks, type RecordLocks } from "./locks.ts";
export type { LockTarget, RecordLocks } from "./locks.ts";

export type { ApiListQuery, ApiListRow, ApiRecord, ApiStore } from "./apis.ts";
export type { AuditLogFilters, AuditLogQuery, AuditLogRecord, AuditLogRow, AuditStore } from "./audit.ts";
export type {
  IdentityListQuery, IdentityListRow, IdentityStore, IdentitySummary, RatelimitConfig, RatelimitConfigStore, RatelimitOwner,
} from "./identities.ts";
export type { PermissionRecord, PermissionRow, RbacListQuery, RbacStore, RoleRecord, RoleRow } from "./rbac.ts";
export type {
  NewRootKey, RootKeyCredential, RootKeyRecord, RootKeyStore, WorkspaceRecord, WorkspaceStore,
} from "./workspaces.ts";
export type { NamespaceListQuery, NamespaceListRow, NamespaceRecord, NamespaceStore, OverrideRecord, OverrideStore } from "./ratelimits.ts";
export type {
  CreditChange, KeyCredits, KeyListQuery, KeyListRow, KeyPatch, KeyRecord, KeySpaceRecord, KeyStore, LinkedPermission, LinkedRole, NewKeyRecord, RefillCandidate,
} from "./keys.ts";
export { DuplicateRecord, LostRace } from "./errors.ts";
export type { IdRange, SizedRow } from "./sized-rows.ts";

export interface Records {
  apis: ApiStore;
  audit: AuditStore;
  identities: IdentityStore;
  /** The named rate limits of keys and identities. */
  limits: RatelimitConfigStore;
  rbac: RbacStore;
  workspaces: WorkspaceStore;
  rootKeys: RootKeyStore;
  /** Rate-limit namespaces and their overrides. */
  namespaces: NamespaceStore;
  overrides: OverrideStore;
  /** End-user keys, their links to permissions and roles, and the workspaces' data keys. */
  keys: KeyStore;
  /** What each workspace's records take, for its quotas. */
  usage: UsageStore;
  /** Locks on the record a unit changes, held to its end (no-ops in the embedded mode). */
  locks: RecordLocks;
}

export interface RecordBackend {
  /**
   * Runs `unit` in one transaction, all or nothing, and answers what it returns. `workspaceId`: the
   * workspace whose records it changes, of which the cluster tells every node (null: none yet).
   * A unit may run more than once when PostgreSQL aborts a transaction that raced another (or the
   * unit throws LostRace): it must not act outside its stores before it returns.
   */
  write<T>(workspaceId: string | null, unit: (records: Records) => Work<T>): Maybe<T>;
  /** Runs `unit`'s reads outside a transaction. */
  read<T>(unit: (records: Records) => Work<T>): Maybe<T>;
  /** Whether every answer is a value (the embedded backend), never a promise. */
  readonly answersAtOnce: boolean;
}

/** The stores over one SQLite database, answering synchronously. */
export function sqliteRecords(db: Db): Records {
  return {
    apis: new SqliteApiStore(db),
    audit: new SqliteAuditStore(db),
    identities: new SqliteIdentityStore(db),
    limits: new SqliteRatelimitConfigStore(db),
    rbac: new SqliteRbacStore(db),
    workspaces: new SqliteWorkspaceStore(db),
    rootKeys: new SqliteRootKeyStore(db),
    namespaces: new SqliteNamespaceStore(db),
    overrides: new SqliteOverrideStore(db),
    keys: new SqliteKeyStore(db),
    usage: new SqliteUsageStore(db),
    locks: new SqliteRecordLocks(),
  };
}

/** The embedded backend: the SQLite file's stores, every unit run to its end at once. */
export function embeddedRecords(storage: Storage): RecordBackend {
  const records = sqliteRecords(storage.db);
  return {
    write: (_workspaceId, unit) => inTransaction(storage, () => runNow(unit(records))),
    read: (unit) => runNow(unit(records)),
    answersAtOnce: true,
  };
}
