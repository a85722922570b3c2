/**
 * `serve` in the cluster mode (TOLLGATE_DATABASE_URL and TOLLGATE_REDIS_URL): the same services as
 * the embedded mode (compose.ts) over PostgreSQL's records, Redis's windows and PostgreSQL's credit
 * decisions. What one node changes reaches the others' caches through change notices
 * (storage/pg/changes.ts), and the scheduled jobs of the records run on one node per tick
 * (jobs/leased.ts). Verification events and rate-limit decisions are written to PostgreSQL's
 * `analytics` schema by every node (services/analytics/pg-writer.ts), queried there by the analytics
 * query processes (as its read-only role) and pruned once per cluster. So a node opens no SQLite
 * database: its data dir keeps only its lock. A node creates no workspace: it refuses (exit 78) a
 * database that `tollgate cluster-init` did not prepare, or whose master key is another
 * (cluster-refusals.ts).
 */
import { SQL } from "bun";
import type { ClusterConfig, Config } from "./config.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/logger.ts";
import type { Services } from "./services/index.ts";
import { lockDataDir } from "./storage/instance-lock.ts";
import { createPrivateDir, tightenModes } from "./storage/private-files.ts";
import { migratePostgres } from "./storage/pg/migrate.ts";
import { PG_MIGRATIONS } from "./storage/pg/migrations.ts";
import { postgresProbe, redisProbe, type ServerProbe } from "./storage/cluster-readiness.ts";
import { DependencyHealth } from "./lib/dependency-health.ts";
import { unreachableStore } from "./storage/unreachable.ts";
import { pgDatabase, type PgDb } from "./storage/pg/db.ts";
import { clusterRecords, RECORDS_SESSION } from "./storage/pg/records/index.ts";
import { ChangeWatcher, pruneSupersededChanges } from "./storage/pg/changes.ts";
import { JobLeases, leaseClaims } from "./storage/pg/job-lease.ts";
import { step } from "./storage/work.ts";
import type { RecordBackend } from "./storage/records/index.ts";
import type { RootKeyLookup } from "./services/auth/index.ts";
import { PgSnapshotLoader, PostgresCredits } from "./services/verification/index.ts";
import { NO_PENDING_CREDITS, PgCreditSpender, type SettlerStats } from "./services/credits/index.ts";
import { RedisWindowLimiter, redisReconnector, redisWindowClient, tolerateUnreachable } from "./services/ratelimit/index.ts";
import { PgEventWriter, PgVerificationTotals, prunePgAnalytics } from "./services/analytics/index.ts";
import { assembleServices, windowCaps, type Backend } from "./compose.ts";
import { refuseBoxDatabase, refuseUninitialisedCluster } from "./cluster-refusals.ts";
import { createApp } from "./app.ts";
import { stopAccepting } from "./http/shutdown.ts";
import { startScheduler } from "./jobs/scheduler.ts";
import { leasedJob } from "./jobs/leased.ts";
import { refillJob } from "./jobs/refill.ts";
import { auditPruneJob } from "./jobs/audit.ts";
import { analyticsPruneJob, startAnalyticsPipeline } from "./jobs/analytics.ts";
import { displayHost, listenAlone, type BootOptions, type ClusterRunning } from "./listen.ts";
import { API_DOCS_PATH } from "./http/openapi.ts";

/** How long a probe waits for PostgreSQL or for Redis before it calls the server down. */
const PROBE_TIMEOUT_MS = 1000;

/** How often a node probes PostgreSQL and Redis (at most one probe of each in flight). */
const DEPENDENCY_PROBE_MS = 1000;

/** Connections of the node's own writes (one flush or lease at a time, and one the prune may hold meanwhile). */
const BACKGROUND_POOL = 2;

/** How long a credit spend waits for PostgreSQL at most: a verification is on its caller's request path. */
const MAX_SPEND_WAIT_MS = 4000;

/** How long a node holds a scheduled job's run without renewing it before another may take it. */
const JOB_LEASE_MS = 60_000;

/** A cluster node's services and what they hold open, for `serve` and for the CLI. */
export interface ClusterServices {
  services: Services;
  sql: SQL;
  /** The pool of the node's own writes (analytics, job leases, the prune), apart from requests'. */
  background: SQL;
  /** The change watcher's connection for its polls (its LISTEN has one more, Bun's own). */
  watcherSql: SQL;
  db: PgDb;
  records: RecordBackend;
  /** Closes what was opened, last first. */
  close(): Promise<void>;
  /** Why the node is not ready: PostgreSQL holds migrations of a newer version; never what every node shares (an outage: `dependencies`). */
  notReady(): Promise<string[]>;
  /** PostgreSQL and Redis, probed every DEPENDENCY_PROBE_MS and told by requests: up or down, and the requests that failed for it. */
  dependencies: DependencyHealth;
  /** Starts probing PostgreSQL and Redis every DEPENDENCY_PROBE_MS (until `close`). */
  watchDependencies(): void;
  /** The credit-spend statements given up on and how they were settled. */
  creditSettlement(): SettlerStats;
  /** The node's change watcher, told of the changes this node records itself. */
  watchWith(watcher: ChangeWatcher): void;
}

/**
 * Opens the cluster's servers (PostgreSQL migrated first, Redis connected when it answers) and
 * assembles the services over them. Verification events and rate-limit decisions are written to
 * PostgreSQL, on the node's pool; callers' analytics queries run there too. Refuses (StartRefused)
 * a database that is not an initialised cluster of this master key, before migrating it, unless
 * `initialising` (`tollgate cluster-init`, which checks for itself).
 */
export async function openClusterServices(config: Config, cluster: ClusterConfig, clock: Clock, logger: Logger, opts: { initialising?: boolean } = {}): Promise<ClusterServices> {
  const closers: Array<() => unknown> = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    createPrivateDir(config.dataDir);
    const sql = new SQL(cluster.databaseUrl, { max: cluster.databasePoolSize, connection: RECORDS_SESSION });
    closers.push(() => sql.close());
    if (!opts.initialising) await refuseUninitialisedCluster(sql, cluster, config.masterKey!);
    const applied = await migratePostgres(cluster.databaseUrl);
    if (applied.length > 0) logger.info("applied PostgreSQL migrations", { migrations: applied });
    const db = pgDatabase(sql);
    // The node's own writes (analytics flushes, job leases, the prune) and the change watcher's
    // polls have pools of their own: a PostgreSQL that hangs keeps each of them waiting on its
    // connection, and none of them may take one that requests need.
    const background = new SQL(cluster.databaseUrl, { max: BACKGROUND_POOL, connectionTimeout: Math.max(1, Math.ceil(cluster.databaseTimeoutMs / 1000)) });
    closers.push(() => background.close({ timeout: 0 }));
    const watcherSql = new SQL(cluster.databaseUrl, { max: 1 });
    closers.push(() => watcherSql.close({ timeout: 0 }));
    // The watcher starts after the services (bootCluster): until then no notice is delivered anyway.
    const watching: { watcher?: ChangeWatcher } = {};
    const records = clusterRecords(db, (stamp) => watching.watcher?.ownChange(stamp), cluster.databaseTimeoutMs);
    const redis = redisWindowClient(cluster.redisUrl);
    closers.push(() => redis.close());
    await redis.connect().catch((error: unknown) => logger.warn("Redis is not reachable yet; rate limits answer by TOLLGATE_REDIS_UNREACHABLE until it is", { error: (error as Error).message }));
    // Bun gives up reconnecting after a few tries: a check (or a readiness probe) that finds Redis away asks again.
    const reconnect = redisReconnector(redis);
    const postgres = postgresProbe(cluster.databaseUrl, PG_MIGRATIONS, PROBE_TIMEOUT_MS);
    closers.push(() => postgres.close());
    // Neither server counts for readiness: every node shares them, so an outage of one would take
    // every node out of the balancer, though each still serves what does not need it. Their
    // outages are watched instead (a warning when one starts and ends, a gauge, counters).
    const dependencies = new DependencyHealth(logger, ["PostgreSQL", "Redis"]);
    const watched: Array<[string, ServerProbe]> = [["PostgreSQL", postgres.probe], ["Redis", redisProbe(redis, reconnect, PROBE_TIMEOUT_MS)]];
    // `serve` watches (bootCluster); a CLI command, which ends soon, does not.
    const watchDependencies = () => {
      const watch = setInterval(() => {
        for (const [name, probe] of watched) {
          void probe().then((failure) => (failure === undefined ? dependencies.up(name) : dependencies.down(name, failure)));
        }
      }, DEPENDENCY_PROBE_MS);
      closers.push(() => clearInterval(watch));
    };
    // A spend waits at most min(4 s, TOLLGATE_DATABASE_TIMEOUT_MS), half of it PostgreSQL's own statement timeout.
    const spender = new PgCreditSpender({ url: cluster.databaseUrl, timeoutMs: Math.max(1, Math.floor(Math.min(MAX_SPEND_WAIT_MS, cluster.databaseTimeoutMs) / 2)) });
    closers.push(() => spender.close());
    const backend: Backend = {
      records,
      masterKey: config.masterKey!,
      changesElsewhere: () => ({ look: () => undefined }),
      credits: NO_PENDING_CREDITS,
      creditTaker: () => new PostgresCredits(spender),
      snapshots: (sharedValueBytes) => new PgSnapshotLoader(sql, sharedValueBytes, cluster.databaseTimeoutMs),
      windows: tolerateUnreachable(new RedisWindowLimiter({ client: redis, clock, caps: windowCaps(config) }), cluster.redisUnreachable, clock, () => {
        dependencies.failed("Redis", cluster.redisUnreachable, "a rate-limit check");
        void reconnect();
      }),
      verificationTotals: new PgVerificationTotals({ sql, records }),
      analyticsQueryUrl: cluster.databaseUrl,
    };
    // The events go to PostgreSQL, every granularity upserted with them: no fold runs.
    const services = assembleServices(backend, config, clock, new PgEventWriter(background, { timeoutMs: cluster.databaseTimeoutMs }));
    // What only this node lacks: a database migrated past its version. Nothing every node shares.
    const notReady = async (): Promise<string[]> => {
      const verdict = postgres.versionVerdict();
      return verdict === undefined ? [] : [verdict];
    };
    return { services, sql, background, watcherSql, db, records, close, notReady, dependencies, watchDependencies, creditSettlement: () => spender.settlement(), watchWith: (watcher) => { watching.watcher = watcher; } };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Starts a cluster node; resolves once it listens. */
export async function bootCluster(opts: BootOptions, cluster: ClusterConfig): Promise<ClusterRunning> {
  const { config, logger } = opts;
  const clock = opts.clock ?? systemClock;
  createPrivateDir(config.dataDir);
  // 0700 as on a box, also for a data dir made beforehand (createPrivateDir leaves one as it is).
  tightenModes(config.dataDir);
  refuseBoxDatabase(config, cluster);
  const lock = lockDataDir(config.dataDir);
  const closers: Array<() => unknown> = [() => lock.release()];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    const node = await openClusterServices(config, cluster, clock, logger);
    closers.push(() => node.close());
    const { services, background, watcherSql, records } = node;
    node.watchDependencies();
    const watcher = new ChangeWatcher({
      sql: watcherSql, pollMs: cluster.changePollMs,
      onChange: (workspaceId) => {
        services.keyCache.workspaceChanged(workspaceId);
        services.keyCache.forgetUnknown();
        services.auth.invalidate();
        services.ratelimits.workspaceChanged(workspaceId);
      },
      onError: (error) => logger.warn("change notices", { error: error.message }),
    });
    node.watchWith(watcher);
    await watcher.start();
    closers.push(() => watcher.stop());
    const analytics = startAnalyticsPipeline({ events: services.verificationEvents, decisions: services.ratelimitDecisions }, { logger, flushMs: config.analyticsFlushMs });
    closers.push(() => analytics.flushAndStop());
    const claims = leaseClaims(new JobLeases(pgDatabase(background)), JOB_LEASE_MS);
    const scheduler = startScheduler([
      leasedJob(refillJob({ records, cache: services.keyCache, credits: services.credits }, clock), claims, logger),
      leasedJob(auditPruneJob({ audit: services.audit }, clock), claims, logger),
      // The analytics tables in PostgreSQL, once per cluster.
      leasedJob(analyticsPruneJob((nowMs) => prunePgAnalytics(background, config.analyticsRetentionDays, nowMs), clock), claims, logger),
      // Every minute: each workspace keeps its latest change notice, so the table stays about one row per workspace.
      leasedJob({ name: "change-notice-prune", pattern: "* * * * *", run: async () => { await pruneSupersededChanges(background); } }, claims, logger),
    ], logger);
    closers.push(() => scheduler.stop());
    let baseUrl = "";
    const app = createApp({
      services, logger, docsUrl: () => config.docsUrl ?? `${baseUrl}/docs`,
      metricsAllow: config.metricsAllow, trustedProxies: config.trustedProxies, allowedHosts: config.allowedHosts,
      httpBounds: config.http, v1Paths: config.v1Paths,
      readiness: node.notReady, unreachableStore, dependencies: node.dependencies, creditSettlement: node.creditSettlement,
    });
    const running: ClusterRunning = {
      mode: "cluster",
      url: "",
      port: 0,
      services,
      // No new requests and none in flight, then (last opened first) the jobs, the last events, the notices, the servers, the lock.
      async stop() {
        await stopAccepting(app, config.shutdownTimeoutMs, logger);
        services.analytics.stop();
        // The spends just answered resolve their verifications in later microtasks, each recording its event.
        await new Promise((resolve) => setImmediate(resolve));
        await closeAll();
      },
    };
    listenAlone(app, config);
    running.port = app.server?.port ?? config.port;
    baseUrl = `http://${displayHost(config.host)}:${running.port}`;
    running.url = baseUrl;
    logger.info("tollgate listening (cluster mode)", { url: baseUrl, console: `${baseUrl}/`, docs: `${baseUrl}${API_DOCS_PATH}`, dataDir: config.dataDir });
    return running;
  } catch (error) {
    await closeAll();
    throw error;
  }
}
