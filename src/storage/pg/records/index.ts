/**
 * The cluster mode's backend of the storage seam (storage/records): the record stores on PostgreSQL,
 * each unit of work in one READ COMMITTED transaction. Why not SERIALIZABLE: every write in a
 * workspace would then race every other (they all read what the others write, if only the change
 * log), and most would be aborted; the invariants a unit needs are held by what PostgreSQL enforces
 * at any level (unique indexes, foreign keys, single-statement updates such as credits) and by an
 * explicit lock on the record a unit reads and then changes (records.locks), so only units
 * touching the same record wait for each other. A transaction that loses a race anyway (deadlock,
 * a row deleted under it, LostRace) is run again after a jittered wait, within the deadline
 * (storage/pg/retry.ts). A unit that changes a workspace records the change in the same
 * transaction (storage/pg/changes.ts), so every node drops its caches of it once it commits.
 */
import { recordChange, type ChangeStamp, type PgTx } from "../changes.ts";
import type { PgDb } from "../db.ts";
export { RECORDS_SESSION } from "../db.ts";
import { within } from "../../../lib/within.ts";
import { StoreUnreachable } from "../../unreachable.ts";
import { runAsync, type Work } from "../../work.ts";
import type { RecordBackend, Records } from "../../records/index.ts";
import { PgApiStore } from "./apis.ts";
import { PgAuditStore } from "./audit.ts";
import { PgIdentityStore, PgRatelimitConfigStore } from "./identities.ts";
import { PgRbacStore } from "./rbac.ts";
import { PgRootKeyStore, PgWorkspaceStore } from "./workspaces.ts";
import { PgNamespaceStore, PgOverrideStore } from "./ratelimits.ts";
import { PgKeyStore } from "./keys.ts";
import { PgUsageStore } from "./usage.ts";
import { PgRecordLocks } from "./locks.ts";
import { namedPgFailure, retryingLostRaces } from "../retry.ts";

/** How long a unit waits for PostgreSQL by default (TOLLGATE_DATABASE_TIMEOUT_MS). */
export const DEFAULT_DATABASE_TIMEOUT_MS = 10_000;

/**
 * `work`, or StoreUnreachable once `timeoutMs` passed: a server that hangs without closing its
 * connections would otherwise hold the request (and its pool connection) until it returns. A write
 * answered so may still commit later, as one whose connection broke may have.
 */
export function withinPg<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  return within(work, timeoutMs, () => {
    throw new StoreUnreachable("PostgreSQL", `PostgreSQL did not answer within ${timeoutMs} ms`);
  });
}

function pgStores(db: PgDb): Records {
  return {
    apis: new PgApiStore(db),
    audit: new PgAuditStore(db),
    identities: new PgIdentityStore(db),
    limits: new PgRatelimitConfigStore(db),
    rbac: new PgRbacStore(db),
    workspaces: new PgWorkspaceStore(db),
    rootKeys: new PgRootKeyStore(db),
    namespaces: new PgNamespaceStore(db),
    overrides: new PgOverrideStore(db),
    keys: new PgKeyStore(db),
    usage: new PgUsageStore(db),
    locks: new PgRecordLocks(db),
  };
}

/**
 * `db`'s connections are opened with RECORDS_SESSION (a database left at PostgreSQL's default,
 * READ COMMITTED, needs nothing). `ownChange` hears the stamp of the change each write records, before its commit (so before its notice can
 * arrive): this node's services drop their own caches after their writes, and its change watcher
 * need not deliver the notice of them again.
 */
export function clusterRecords(db: PgDb, ownChange: (stamp: ChangeStamp) => void = () => undefined, timeoutMs = DEFAULT_DATABASE_TIMEOUT_MS): RecordBackend {
  const attempt = <T>(workspaceId: string | null, unit: (records: Records) => Work<T>) =>
    db.transaction(async (tx) => {
      const out = await runAsync(unit(pgStores(tx as unknown as PgDb)));
      if (workspaceId !== null) ownChange(await recordChange(tx as unknown as PgTx, workspaceId));
      return out;
    });
  return {
    write: (workspaceId, unit) => {
      // The last retry starts early enough to leave it a tenth of the deadline.
      const deadline = performance.now() + timeoutMs * 0.9;
      return withinPg(retryingLostRaces(() => attempt(workspaceId, unit), { deadline }), timeoutMs);
    },
    read: (unit) => withinPg(runAsync(unit(pgStores(db))).catch((error: unknown) => { throw namedPgFailure(error); }), timeoutMs),
    answersAtOnce: false,
  };
}
