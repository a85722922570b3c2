/**
 * The services, assembled over a backend: the same assembly for the embedded mode (SQLite, the
 * in-memory windows, the credit ledger) and the cluster mode (PostgreSQL, Redis windows, credits
 * decided by PostgreSQL), which differ only in what `Backend` gives.
 */
import type { Config } from "./config.ts";
import type { Clock } from "./lib/clock.ts";
import type { Storage } from "./storage/db.ts";
import type { ChangesElsewhere } from "./storage/external-commits.ts";
import type { RecordBackend } from "./storage/records/index.ts";
import type { Services } from "./services/index.ts";
import { recordsRootKeyLookup, RootKeyAuthenticator } from "./services/auth/index.ts";
import { WorkspaceService } from "./services/workspaces/index.ts";
import { ApiService } from "./services/apis/index.ts";
import { IdentityService } from "./services/identities/index.ts";
import { KeyService, Vault } from "./services/keys/index.ts";
import { RbacService } from "./services/rbac/index.ts";
import { VerificationService, type CreditTaker, type KeySnapshot, type KeySnapshotSource } from "./services/verification/index.ts";
import { KeyCache } from "./services/key-cache/index.ts";
import type { CreditAccounts } from "./services/credits/index.ts";
import { RatelimitService, type WindowCaps, type WindowLimiter } from "./services/ratelimit/index.ts";
import { AuditService } from "./services/audit/index.ts";
import { QuotaService } from "./services/quotas/index.ts";
import { RatelimitDecisionAggregator, VerificationEventSink, type DecisionRowWriter, type EventBatchWriter } from "./services/analytics/index.ts";
import { AnalyticsQueryService, AnalyticsProcessPool, VerificationTotals, MAX_ANALYTICS_ROWS, MAX_RESULT_BYTES, type VerificationTotalsReader } from "./services/analytics/index.ts";
import { analyticsQueryProcessArgv } from "./cli/analytics-query-process.ts";

const MIB = 1024 * 1024;

/** What differs between the modes. */
export type Backend = RecordsBackend & AnalyticsBackend;

interface RecordsBackend {
  records: RecordBackend;
  masterKey: Uint8Array;
  /** What tells this process that records changed elsewhere; `react` drops its caches. */
  changesElsewhere(react: () => void): ChangesElsewhere;
  credits: CreditAccounts;
  /** How verifications take credits; `dropKey` forgets a key whose spend failed. */
  creditTaker(dropKey: (keyId: string) => void): CreditTaker;
  /** Where key snapshots come from on a miss; `sharedValueBytes` bounds the values they share. */
  snapshots(sharedValueBytes: number): KeySnapshotSource;
  /** The windows checks use. */
  windows: WindowLimiter;
  /** The SQLite file a rate-limit check reads on a cache miss (the embedded mode). */
  ratelimitStorage?: Storage;
}

/**
 * Where analytics are read, by mode: analytics.db beside tollgate.db (the embedded mode), or the
 * cluster's PostgreSQL (a cluster node, which keeps no analytics.db).
 */
type AnalyticsBackend =
  | {
    /** analytics.db: verification events and rollups, which the query processes read. */
    analytics: Storage;
    /** tollgate.db, for `tollgate stats`' names of APIs. */
    statsStorage: Storage;
    analyticsQueryUrl?: never;
    verificationTotals?: never;
  }
  | {
    /** The cluster's database: callers' analytics queries run there, in its schema `analytics` as its read-only role. */
    analyticsQueryUrl: string;
    /** `tollgate stats`' counts: PostgreSQL's totals. */
    verificationTotals: VerificationTotalsReader;
    analytics?: never;
    statsStorage?: never;
  };

/** Every service over `backend`. Verification events go to `eventWriter`. */
/** The rate-limit windows' memory caps, in memory on a box and in Redis on a node. */
export function windowCaps(config: Config): WindowCaps {
  return { totalBytes: config.ratelimitMemoryMiB * MIB, workspaceBytes: config.ratelimitWorkspaceMemoryMiB * MIB };
}

export function assembleServices(backend: Backend, config: Config, clock: Clock, eventWriter: EventBatchWriter & DecisionRowWriter): Services {
  const { records } = backend;
  const quotas = config.workspaceQuotas;
  const vault = new Vault({ records, clock, masterKey: backend.masterKey });
  // The ledger first (the backend's reaction), since the key cache reloads balances from it.
  const changesElsewhere = backend.changesElsewhere(() => {
    cache.clear();
    auth.invalidate();
  });
  const auth = new RootKeyAuthenticator({
    lookup: recordsRootKeyLookup(records), lookupAnswersLater: !records.answersAtOnce, clock, changesElsewhere,
    unknown: config.unknownRootKeys, concurrentLookups: config.cluster?.rootKeyLookups ?? 1,
  });
  // One budget for the key cache: its snapshots and the values they share (verification/shared-values.ts).
  const keyCacheBytes = config.keyCacheMb * MIB;
  const cache = new KeyCache<KeySnapshot>({ maxEntries: config.keyCacheSize, maxBytes: keyCacheBytes - keyCacheBytes / 8 });
  const { credits } = backend;
  const pageBytes = config.listPageBytes;
  // Rate-limit decisions go the way verification events go, by the same switch (TOLLGATE_ANALYTICS).
  const ratelimitDecisions = new RatelimitDecisionAggregator({ writer: eventWriter, maxPendingRows: config.analyticsRatelimitPendingRows });
  const verificationEvents = new VerificationEventSink({ writer: eventWriter, decisions: ratelimitDecisions });
  return {
    auth,
    workspaces: new WorkspaceService({ records, clock, quotas, onChange: () => auth.invalidate(), recordsVerifications: config.recordVerifications }),
    apis: new ApiService({ records, clock, cache, pageBytes }),
    keys: new KeyService({ records, clock, vault, cache, credits, quotas, pageBytes }),
    identities: new IdentityService({ records, clock, cache, quotas, pageBytes }),
    rbac: new RbacService({ records, clock, quotas, pageBytes, onAccessChanged: (workspaceId) => cache.workspaceChanged(workspaceId) }),
    verification: new VerificationService({
      clock, cache, changesElsewhere, limiter: backend.windows,
      snapshots: backend.snapshots(keyCacheBytes / 8),
      credits: backend.creditTaker((keyId) => cache.keyChanged(keyId)),
      maxApisCounted: config.metricsMaxApis, ...(config.recordVerifications ? { events: verificationEvents } : {}),
    }),
    ratelimits: new RatelimitService({
      records, clock, quotas, limiter: backend.windows, ...(backend.ratelimitStorage ? { storage: backend.ratelimitStorage } : {}),
      namespaceCacheCaps: { totalBytes: config.ratelimitNamespaceCacheMiB.total * MIB, workspaceBytes: config.ratelimitNamespaceCacheMiB.workspace * MIB },
      wildcardOverridesPerNamespace: config.ratelimitWildcardOverrides, pageBytes, ...(config.recordVerifications ? { decisions: ratelimitDecisions } : {}),
    }),
    audit: new AuditService({ records, clock, retentionDays: config.auditRetentionDays, pageBytes }),
    quotas: new QuotaService({ records, quotas }),
    analytics: new AnalyticsQueryService({
      records, clock,
      // Query processes start on the first query, so CLI commands that build services start none.
      runner: new AnalyticsProcessPool({
        ...(backend.analytics !== undefined ? { dbPath: backend.analytics.sqlite.filename } : { postgresUrl: backend.analyticsQueryUrl }),
        command: analyticsQueryProcessArgv(), timeoutMs: config.analyticsQueryTimeoutMs,
        maxRows: MAX_ANALYTICS_ROWS, maxBytes: MAX_RESULT_BYTES,
        processes: config.analyticsQueryProcesses, perWorkspace: config.analyticsQueriesPerWorkspace,
      }),
    }),
    verificationTotals: backend.analytics !== undefined ? new VerificationTotals({ storage: backend.statsStorage, analytics: backend.analytics }) : backend.verificationTotals,
    keyCache: cache,
    credits,
    verificationEvents,
    ratelimitDecisions,
  };
}
