/**
 * The composition root: open the database → migrate → bootstrap → services → app → listen.
 * Returns a handle whose stop() closes the listener and the database. The only place that
 * builds concrete implementations.
 */
import { mkdirSync } from "node:fs";
import type { Config } from "./config.ts";
import type { Clock } from "./lib/clock.ts";
import { systemClock } from "./lib/clock.ts";
import type { Logger } from "./lib/logger.ts";
import { checkpointWal, databaseSizeBytes, leaveCheckpointsToCheckpointer, type Storage } from "./storage/db.ts";
import { ANALYTICS_DATABASE_FILE, DATABASE_FILE, openDataStores, type DataStores } from "./storage/data-dir.ts";
import { Checkpointer } from "./storage/checkpointer.ts";
import type { CheckpointOptions } from "./storage/checkpoint-pass.ts";
import type { Services } from "./services/index.ts";
import { RootKeyAuthenticator } from "./services/auth/index.ts";
import { WorkspaceService } from "./services/workspaces/index.ts";
import { ApiService } from "./services/apis/index.ts";
import { IdentityService } from "./services/identities/index.ts";
import { KeyService, Vault } from "./services/keys/index.ts";
import { RbacService } from "./services/rbac/index.ts";
import { VerificationService, type KeySnapshot } from "./services/verification/index.ts";
import { KeyCache } from "./services/key-cache/index.ts";
import { CreditLedger } from "./services/credits/index.ts";
import { RatelimitService, RatelimitStore, SlidingWindowLimiter } from "./services/ratelimit/index.ts";
import { bootstrapWorkspace, loadMasterKey } from "./bootstrap.ts";
import { createApp } from "./app.ts";
import { stopAccepting } from "./http/shutdown.ts";
import { startScheduler } from "./jobs/scheduler.ts";
import { refillJob, runRefillOnce } from "./jobs/refill.ts";
import { startRatelimitPersistence } from "./jobs/ratelimit.ts";
import { AuditService } from "./services/audit/index.ts";
import { SqliteEventWriter, VerificationEventSink, WorkerEventWriter, type EventBatchWriter } from "./services/analytics/index.ts";
import { AnalyticsQueryService, AnalyticsProcessPool, MAX_ANALYTICS_ROWS, MAX_RESULT_BYTES } from "./services/analytics/index.ts";
import { analyticsQueryProcessArgv } from "./cli/analytics-query-process.ts";
import { auditPruneJob } from "./jobs/audit.ts";
import { startAnalyticsPipeline } from "./jobs/analytics.ts";

/** How long a stop may spend folding pending credit spends into keys.remaining (the rest waits in the journal). */
const CREDIT_FOLD_BUDGET_MS = 1000;

export interface BootOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
}

export interface Running {
  url: string;
  port: number;
  services: Services;
  /** tollgate.db. */
  storage: Storage;
  /** analytics.db: verification events and rollups (storage/data-dir.ts). */
  analytics: Storage;
  stop(): Promise<void>;
}

/** Opens the data dir and its databases and applies migrations; shared by `serve`, `migrate` and the CLI commands. */
export function openDataDir(config: Config, logger: Logger): DataStores {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const stores = openDataStores(config.dataDir);
  if (stores.applied.length > 0) logger.info("applied migrations", { migrations: stores.applied });
  return stores;
}

/**
 * Builds every service over the data dir's databases. Verification events are written on the
 * calling thread unless `eventWriter` says otherwise (`serve` writes them from a worker thread).
 */
export function buildServices(dataDir: Pick<DataStores, "storage" | "analytics">, config: Config, clock: Clock, opts: { eventWriter?: EventBatchWriter } = {}): Services {
  const { storage, analytics } = dataDir;
  const vault = new Vault({ storage, clock, masterKey: loadMasterKey(config.dataDir, config.masterKey) });
  const auth = new RootKeyAuthenticator({ storage, clock });
  const cache = new KeyCache<KeySnapshot>(config.keyCacheSize);
  const limiter = new SlidingWindowLimiter({ clock });
  const credits = new CreditLedger(storage);
  const verificationEvents = new VerificationEventSink({ writer: opts.eventWriter ?? new SqliteEventWriter(analytics) });
  return {
    auth,
    workspaces: new WorkspaceService({ storage, clock, onChange: () => auth.invalidate() }),
    apis: new ApiService({ storage, clock, cache }),
    keys: new KeyService({ storage, clock, vault, cache, credits }),
    identities: new IdentityService({ storage, clock, cache }),
    rbac: new RbacService({ storage, clock, onAccessChanged: () => cache.allChanged() }),
    verification: new VerificationService({ storage, clock, limiter, cache, credits, ...(config.recordVerifications ? { events: verificationEvents } : {}) }),
    ratelimits: new RatelimitService({ storage, clock, limiter }),
    audit: new AuditService({ storage, clock, retentionDays: config.auditRetentionDays }),
    analytics: new AnalyticsQueryService({
      storage, clock,
      // Query processes start on the first query, so CLI commands that build services start none.
      runner: new AnalyticsProcessPool({
        dbPath: analytics.sqlite.filename, command: analyticsQueryProcessArgv(), timeoutMs: config.analyticsQueryTimeoutMs,
        maxRows: MAX_ANALYTICS_ROWS, maxBytes: MAX_RESULT_BYTES,
        processes: config.analyticsQueryProcesses, perWorkspace: config.analyticsQueriesPerWorkspace,
      }),
    }),
    keyCache: cache,
    credits,
    limiter,
    verificationEvents,
  };
}

/**
 * First start on an empty data dir, whichever command opens it first (`serve` or a CLI command):
 * workspace `default` and its bootstrap root key. A no-op once any workspace exists.
 */
export function bootstrapDataDir(services: Services, config: Config, logger: Logger): void {
  const first = bootstrapWorkspace(services.workspaces, config.dataDir, config.rootKey);
  if (first.created) {
    logger.info("created workspace 'default' and its bootstrap root key", first.keyFile ? { rootKeyFile: first.keyFile } : { rootKeyFrom: "TOLLGATE_ROOT_KEY" });
  }
}

/**
 * The checkpointer's thread: a pass every second; the WAL restarted once it holds 4,096 frames
 * (16 MiB of 4 KiB pages, one 32 KiB region of its -shm index), waiting at most 50 ms for the
 * write lock and then for readers (a writer waits that long at most, and for the copy of the
 * frames written since the passive checkpoint of the same pass).
 */
const CHECKPOINTS: CheckpointOptions = { intervalMs: 1000, restartAtFrames: 4096, restartBusyTimeoutMs: 50 };

/** Moves the WAL checkpoints of `storage`'s file off the main thread (see storage/checkpointer.ts). */
function checkpointOffMainThread(storage: Storage): Checkpointer {
  leaveCheckpointsToCheckpointer(storage.sqlite);
  return new Checkpointer(storage.sqlite.filename, CHECKPOINTS);
}

/** Starts the service; resolves once it listens. */
export async function boot(opts: BootOptions): Promise<Running> {
  const { config, logger } = opts;
  const clock = opts.clock ?? systemClock;
  const dataDir = openDataDir(config, logger);
  const { storage, analytics: analyticsStorage } = dataDir;
  const files = [{ name: DATABASE_FILE, storage }, { name: ANALYTICS_DATABASE_FILE, storage: analyticsStorage }];
  // One checkpointer per file: the analytics WAL's checkpoints hold only analytics.db's write lock.
  const checkpointers = files.map((f) => checkpointOffMainThread(f.storage));
  const services = buildServices(dataDir, config, clock, { eventWriter: new WorkerEventWriter(analyticsStorage.sqlite.filename, { autoCheckpoint: false }) });
  bootstrapDataDir(services, config, logger);
  const pendingCredits = services.credits.restore();
  if (pendingCredits > 0) logger.info("restored the credit journal", { keys: pendingCredits });
  const refillDeps = { storage, cache: services.keyCache, credits: services.credits };
  const caughtUp = runRefillOnce(refillDeps, clock.now());
  if (caughtUp > 0) logger.info("applied credit refills missed while stopped", { keys: caughtUp });
  const ratelimitState = startRatelimitPersistence({ store: new RatelimitStore({ storage, limiter: services.limiter }) }, { clock, logger, flushMs: config.ratelimitFlushMs });
  const analytics = startAnalyticsPipeline(
    { storage: analyticsStorage, events: services.verificationEvents, retentionDays: config.analyticsRetentionDays }, { clock, logger, flushMs: config.analyticsFlushMs },
  );
  const scheduler = startScheduler([
    refillJob(refillDeps, clock),
    ratelimitState.pruneJob,
    auditPruneJob({ audit: services.audit }, clock),
    analytics.pruneJob,
  ], logger);
  let baseUrl = "";
  const app = createApp({
    services, logger, docsUrl: () => config.docsUrl ?? `${baseUrl}/docs`,
    metricsAllow: config.metricsAllow, trustedProxies: config.trustedProxies, databaseSizeBytes: () => databaseSizeBytes(storage),
    analyticsDatabaseSizeBytes: () => databaseSizeBytes(analyticsStorage),
  });
  app.listen({ hostname: config.host, port: config.port, maxRequestBodySize: 8 * 1024 * 1024 });
  const server = app.server;
  if (!server) throw new Error("the HTTP server did not start");
  const port = server.port ?? config.port;
  const displayHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  baseUrl = `http://${displayHost}:${port}`;
  logger.info("tollgate listening", { url: baseUrl, dataDir: config.dataDir });
  return {
    url: baseUrl,
    port,
    services,
    storage,
    analytics: analyticsStorage,
    // Order matters: no new requests and none in flight → every buffer flushed → the WALs folded
    // into tollgate.db and analytics.db → closed. A flush before the drain could miss writes of
    // the last requests.
    async stop() {
      scheduler.stop();
      await stopAccepting(app, config.shutdownTimeoutMs, logger);
      services.analytics.stop();
      services.credits.foldAll(CREDIT_FOLD_BUDGET_MS);
      // The spends just committed resolve their verifications in later microtasks, and each of
      // those records its event: let them run before the last event flush.
      await new Promise((resolve) => setImmediate(resolve));
      await analytics.flushAndStop();
      ratelimitState.flushAndStop();
      for (const checkpointer of checkpointers) await checkpointer.stop();
      for (const file of files) {
        const checkpoint = checkpointWal(file.storage);
        if (checkpoint.busy !== 0) logger.warn(`the WAL could not be folded into ${file.name}; it is kept and replayed on the next start`, { ...checkpoint });
      }
      dataDir.close();
    },
  };
}
