/**
 * The composition root: lock the data dir → open the database → migrate → bootstrap → services →
 * app → listen. Returns a handle whose stop() closes the listener and the database and releases
 * the lock. The only place that builds concrete implementations.
 */
import { join } from "node:path";
import type { Config } from "./config.ts";
import type { Clock } from "./lib/clock.ts";
import { systemClock } from "./lib/clock.ts";
import type { Logger } from "./lib/logger.ts";
import { checkpointWal, databaseSizeBytes, leaveCheckpointsToCheckpointer, type Storage } from "./storage/db.ts";
import { ANALYTICS_DATABASE_FILE, DATABASE_FILE, openDataStores, type DataStores } from "./storage/data-dir.ts";
import { Checkpointer } from "./storage/checkpointer.ts";
import { ExternalCommits } from "./storage/external-commits.ts";
import { ANALYTICS_MIGRATIONS, MIGRATIONS } from "./storage/migrations.ts";
import { databaseNotReady } from "./storage/readiness.ts";
import type { CheckpointOptions } from "./storage/checkpoint-pass.ts";
import type { Services } from "./services/index.ts";
import { LedgerCredits, SnapshotLoader } from "./services/verification/index.ts";
import { assembleServices, windowCaps, type Backend } from "./compose.ts";
import { checkCanListen, displayHost, listenAlone, type BootOptions, type EmbeddedRunning, type Running } from "./listen.ts";
import { bootCluster } from "./boot-cluster.ts";

export type { BootOptions, ClusterRunning, EmbeddedRunning, Running } from "./listen.ts";
import { embeddedRecords } from "./storage/records/index.ts";
import { answered } from "./storage/work.ts";
import { CreditLedger } from "./services/credits/index.ts";
import { RatelimitStore, SlidingWindowLimiter } from "./services/ratelimit/index.ts";
import { BOOTSTRAP_KEY_FILE, bootstrapWorkspace, loadMasterKey, MASTER_KEY_FILE } from "./bootstrap.ts";
import { lockDataDir, type InstanceLock } from "./storage/instance-lock.ts";
import { createPrivateDir, tightenModes } from "./storage/private-files.ts";
import { createApp } from "./app.ts";
import { stopAccepting } from "./http/shutdown.ts";
import { API_DOCS_PATH } from "./http/openapi.ts";
import { startScheduler } from "./jobs/scheduler.ts";
import { refillJob, runRefillOnce } from "./jobs/refill.ts";
import { startRatelimitPersistence } from "./jobs/ratelimit.ts";
import { SqliteEventWriter, WorkerEventWriter, type DecisionRowWriter, type EventBatchWriter } from "./services/analytics/index.ts";
import { auditPruneJob } from "./jobs/audit.ts";
import { analyticsDbPruneJob, startAnalyticsPipeline } from "./jobs/analytics.ts";

/** How long a stop may spend folding pending credit spends into keys.remaining (the rest waits in the journal). */
const CREDIT_FOLD_BUDGET_MS = 1000;

/** Opens the data dir and its databases and applies migrations; shared by `serve`, `migrate` and the CLI commands. */
export function openDataDir(config: Config, logger: Logger): DataStores {
  createPrivateDir(config.dataDir);
  const stores = openDataStores(config.dataDir);
  if (stores.applied.length > 0) logger.info("applied migrations", { migrations: stores.applied });
  return stores;
}

/** The embedded mode's services: its rate-limit windows are in memory, saved across restarts. */
export type EmbeddedServices = Services & { limiter: SlidingWindowLimiter };

/**
 * Builds every service over the data dir's databases. Verification events are written on the
 * calling thread unless `eventWriter` says otherwise (`serve` writes them from a worker thread).
 */
export function buildServices(
  dataDir: Pick<DataStores, "storage" | "analytics">, config: Config, clock: Clock, opts: { eventWriter?: EventBatchWriter & DecisionRowWriter } = {},
): EmbeddedServices {
  const { storage, analytics } = dataDir;
  // One watcher of other processes' commits (a CLI command beside `serve`): the ledger reloads
  // first, then the services drop their caches (`react`, given by assembleServices).
  let react = () => undefined as void;
  const watcher = new ExternalCommits(storage.sqlite, () => {
    credits.restore();
    react();
  });
  const credits = new CreditLedger(storage, {}, watcher);
  const windows = new SlidingWindowLimiter({
    clock, caps: windowCaps(config),
  });
  const backend: Backend = {
    records: embeddedRecords(storage),
    masterKey: loadMasterKey(config.dataDir, config.masterKey),
    changesElsewhere: (reaction) => {
      react = reaction;
      return watcher;
    },
    credits,
    creditTaker: (dropKey) => new LedgerCredits(credits, dropKey),
    snapshots: (sharedValueBytes) => new SnapshotLoader(storage.sqlite, credits, sharedValueBytes, config.keySlicedLoads),
    windows,
    ratelimitStorage: storage,
    analytics,
    statsStorage: storage,
  };
  // The windows checks use are the in-memory ones, which boot.ts saves across restarts and /metrics reports.
  return { ...assembleServices(backend, config, clock, opts.eventWriter ?? new SqliteEventWriter(analytics)), limiter: windows };
}

/**
 * First start on an empty data dir, whichever command opens it first (`serve` or a CLI command):
 * workspace `default` and its bootstrap root key. A no-op once any workspace exists.
 */
export function bootstrapDataDir(services: Services, config: Config, logger: Logger): void {
  // The embedded start-up stays synchronous: its backend answers at once.
  const first = answered(bootstrapWorkspace(services.workspaces, config.dataDir, config.rootKey));
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

/** The files whose content is a secret: readable by others before this start is worth a warning. */
const SECRET_FILES = [MASTER_KEY_FILE, BOOTSTRAP_KEY_FILE];

/** Narrows the modes of a data dir written by an older version (storage/private-files.ts) and says so. */
function tightenDataDir(dataDir: string, logger: Logger): void {
  const exposed = tightenModes(dataDir);
  const narrowed = exposed.filter((f) => f.narrowed).map((f) => f.name);
  if (narrowed.length > 0) logger.info("made the data dir's files private to their owner (0600)", { dataDir, files: narrowed });
  for (const f of exposed) {
    if (!SECRET_FILES.includes(f.name) || (f.modeBefore & 0o044) === 0) continue;
    const was = `${join(dataDir, f.name)} was readable by other users (mode ${f.modeBefore.toString(8).padStart(4, "0")})`;
    logger.warn(f.narrowed ? `${was}; it is 0600 now, but whoever read it before may hold the key` : `${was} and belongs to another user: make it 0600`);
  }
}

/**
 * Starts the service; resolves once it listens. Holds the data dir's lock from before it opens a
 * database until stop(); a data dir in use (DataDirInUseError) or an address in use fails the
 * start with nothing left running, open or held.
 */
export async function boot(opts: BootOptions): Promise<Running> {
  checkCanListen(opts.config);
  if (opts.config.cluster) return bootCluster(opts, opts.config.cluster);
  createPrivateDir(opts.config.dataDir);
  const lock = lockDataDir(opts.config.dataDir);
  try {
    return await startLocked(opts, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function startLocked(opts: BootOptions, lock: InstanceLock): Promise<EmbeddedRunning> {
  const { config, logger } = opts;
  const clock = opts.clock ?? systemClock;
  tightenDataDir(config.dataDir, logger);
  const dataDir = openDataDir(config, logger);
  const { storage, analytics: analyticsStorage } = dataDir;
  // Services (which start no thread) and the bootstrap before anything that runs: a failure
  // here leaves only the databases to close.
  let services: EmbeddedServices;
  try {
    services = buildServices(dataDir, config, clock, { eventWriter: new WorkerEventWriter(analyticsStorage.sqlite.filename, { autoCheckpoint: false }) });
    bootstrapDataDir(services, config, logger);
  } catch (error) {
    dataDir.close();
    throw error;
  }
  const files = [{ name: DATABASE_FILE, storage }, { name: ANALYTICS_DATABASE_FILE, storage: analyticsStorage }];
  // One checkpointer per file: the analytics WAL's checkpoints hold only analytics.db's write lock.
  const checkpointers = files.map((f) => checkpointOffMainThread(f.storage));
  const pendingCredits = services.credits.restore();
  if (pendingCredits > 0) logger.info("restored the credit journal", { keys: pendingCredits });
  const refillDeps = { records: embeddedRecords(storage), cache: services.keyCache, credits: services.credits };
  const caughtUp = answered(runRefillOnce(refillDeps, clock.now()));
  if (caughtUp > 0) logger.info("applied credit refills missed while stopped", { keys: caughtUp });
  const { limiter } = services;
  const ratelimitState = startRatelimitPersistence(
    { store: new RatelimitStore({ storage, limiter }), limiter }, { clock, logger, flushMs: config.ratelimitFlushMs },
  );
  const analytics = startAnalyticsPipeline({ events: services.verificationEvents, decisions: services.ratelimitDecisions }, { logger, flushMs: config.analyticsFlushMs });
  const scheduler = startScheduler([
    refillJob(refillDeps, clock),
    ratelimitState.pruneJob,
    auditPruneJob({ audit: services.audit }, clock),
    analyticsDbPruneJob({ storage: analyticsStorage, retentionDays: config.analyticsRetentionDays }, clock),
  ], logger);
  let baseUrl = "";
  const app = createApp({
    services, logger, docsUrl: () => config.docsUrl ?? `${baseUrl}/docs`,
    metricsAllow: config.metricsAllow, trustedProxies: config.trustedProxies, allowedHosts: config.allowedHosts, databaseSizeBytes: () => databaseSizeBytes(storage),
    analyticsDatabaseSizeBytes: () => databaseSizeBytes(analyticsStorage), httpBounds: config.http, v1Paths: config.v1Paths,
    readiness: () => [
      databaseNotReady(storage, DATABASE_FILE, MIGRATIONS), databaseNotReady(analyticsStorage, ANALYTICS_DATABASE_FILE, ANALYTICS_MIGRATIONS),
    ].filter((failure) => failure !== undefined),
  });
  const running: EmbeddedRunning = {
    mode: "embedded",
    url: "",
    port: 0,
    services,
    storage,
    analytics: analyticsStorage,
    limiter,
    // Order matters: no new requests and none in flight → every buffer flushed → the WALs folded
    // into tollgate.db and analytics.db → closed → the lock released. A flush before the drain
    // could miss writes of the last requests.
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
      lock.release();
    },
  };
  try {
    listenAlone(app, config);
  } catch (error) {
    await running.stop();
    throw error;
  }
  running.port = app.server?.port ?? config.port;
  baseUrl = `http://${displayHost(config.host)}:${running.port}`;
  running.url = baseUrl;
  logger.info("tollgate listening", { url: baseUrl, console: `${baseUrl}/`, docs: `${baseUrl}${API_DOCS_PATH}`, dataDir: config.dataDir });
  return running;
}
