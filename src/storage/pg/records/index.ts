/**
 * The cluster mode's backend of the storage seam (storage/records): the record stores on PostgreSQL,
 * each unit of work in one SERIALIZABLE transaction, so that what a unit reads and then writes holds
 * as it does in the embedded mode, where one process writes at a time. A transaction that PostgreSQL
 * aborts for racing another (serialization failure, deadlock) is run again from the start, up to
 * MAX_ATTEMPTS times. A unit that changes a workspace records the change in the same transaction
 * (storage/pg/changes.ts), so every node drops its caches of it once it commits.
 */
import { recordChange, type PgTx } from "../changes.ts";
import type { PgDb } from "../db.ts";
import { inCauses } from "../../records/errors.ts";
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

/** Attempts of a unit whose transactions keep racing others, before its error is answered. */
export const MAX_ATTEMPTS = 5;

/** SQLSTATEs of a transaction aborted for racing another: serialization_failure, deadlock_detected. */
const RACE_STATES = new Set(["40001", "40P01"]);

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
  };
}

/** True when PostgreSQL aborted the transaction for racing another (drizzle wraps the driver's error). */
export function lostRace(error: unknown): boolean {
  return inCauses(error, (e) => typeof e.errno === "string" && RACE_STATES.has(e.errno));
}

/** `attempt` (one transaction), run again from the start while PostgreSQL aborts it for racing another, `attempts` times at most. */
export async function retryingLostRaces<T>(attempt: () => Promise<T>, attempts = MAX_ATTEMPTS): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= attempts || !lostRace(error)) throw error;
    }
  }
}

/**
 * `ownChange` hears the version each write records, before its commit (so before its notice can
 * arrive): this node's services drop their own caches after their writes, and its change watcher
 * need not deliver the notice of them again.
 */
export function clusterRecords(db: PgDb, ownChange: (version: number) => void = () => undefined, timeoutMs = DEFAULT_DATABASE_TIMEOUT_MS): RecordBackend {
  const attempt = <T>(workspaceId: string | null, unit: (records: Records) => Work<T>) =>
    db.transaction(async (tx) => {
      const out = await runAsync(unit(pgStores(tx as unknown as PgDb)));
      if (workspaceId !== null) ownChange(await recordChange(tx as unknown as PgTx, workspaceId));
      return out;
    }, { isolationLevel: "serializable" });
  return {
    write: (workspaceId, unit) => withinPg(retryingLostRaces(() => attempt(workspaceId, unit)), timeoutMs),
    read: (unit) => withinPg(runAsync(unit(pgStores(db))), timeoutMs),
    answersAtOnce: false,
  };
}
