/**
 * The servers of a harness in the cluster mode (TOLLGATE_TEST_BACKEND=cluster): one PostgreSQL
 * server for the whole test process, started on first use and stopped after the last test file
 * (test/support/preload.ts: bun test fires no exit event a hook could use), a
 * fresh migrated database for every harness, and a Redis server of its own for every harness, so
 * that no two harnesses share a record or a window.
 */
import { SQL } from "bun";
import { test } from "bun:test";
import { initialiseCluster } from "../../src/cli/cluster-init.ts";
import { loadConfig } from "../../src/config.ts";
import { systemClock, type Clock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { startPostgres, startRedis, type RestartableServer, type TestServer } from "./servers.ts";
import { missing, requireTool } from "./tools.ts";

/** Which backend the harness boots: the embedded SQLite unless TOLLGATE_TEST_BACKEND=cluster. */
export const TEST_BACKEND: "embedded" | "cluster" = process.env.TOLLGATE_TEST_BACKEND === "cluster" ? "cluster" : "embedded";

/**
 * `test`, skipped on a cluster node: the test needs the embedded SQLite's machinery (triggers,
 * PRAGMAs, the database file, windows kept in memory across a restart). `reason` says which, in
 * the skipped test's name.
 */
export function embeddedOnly(reason: string): (name: string, fn: () => unknown, timeoutMs?: number) => void {
  const cluster = TEST_BACKEND === "cluster";
  return (name, fn, timeoutMs) => test.skipIf(cluster)(cluster ? `${name} [embedded only: ${reason}]` : name, fn as () => Promise<void>, timeoutMs);
}

interface SharedPostgres {
  server: TestServer;
  admin: SQL;
}

const postgres: { started?: Promise<SharedPostgres> } = {};

function sharedPostgres(): Promise<SharedPostgres> {
  postgres.started ??= (async () => {
    requireTool(missing.postgres());
    const server = await startPostgres();
    return { server, admin: new SQL(server.url, { max: 2 }) };
  })();
  return postgres.started;
}

/** Stops the process's PostgreSQL server, if one was started. */
export async function stopSharedPostgres(): Promise<void> {
  const started = postgres.started;
  postgres.started = undefined;
  if (started === undefined) return;
  const { server, admin } = await started;
  await admin.close();
  await server.stop();
}

export interface ClusterServers {
  /** TOLLGATE_DATABASE_URL, TOLLGATE_REDIS_URL and the master key the cluster mode needs, of this harness. */
  env: Record<string, string>;
  /** Stops the harness's Redis and drops its database. */
  stop(): Promise<void>;
  /**
   * Initialises the database as `tollgate cluster-init` does (the same code), with `env` beside
   * `env` above (the data dir, TOLLGATE_ROOT_KEY); once: later calls find it done and do nothing.
   */
  initialise(env: Record<string, string>, clock?: Clock): Promise<void>;
}

/** `initialise` of ClusterServers: the first call's initialisation, shared by the later ones. */
function initialiser(serverEnv: () => Record<string, string>): (env: Record<string, string>, clock?: Clock) => Promise<void> {
  let done: Promise<void> | undefined;
  return (env, clock = systemClock) => {
    done ??= (async () => {
      const config = loadConfig({ ...serverEnv(), ...env });
      // The harness's clock: the workspace's and root key's audit entries are dated as a box's bootstrap dates them.
      await initialiseCluster(config, config.cluster!, clock, silentLogger);
    })();
    return done;
  };
}

/** The environment of a cluster node on these servers, with a new master key. */
function clusterEnv(databaseUrl: string, redisUrl: string): Record<string, string> {
  return { TOLLGATE_DATABASE_URL: databaseUrl, TOLLGATE_REDIS_URL: redisUrl, TOLLGATE_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64") };
}

/** A fresh database on the process's PostgreSQL and a new Redis, for one harness. */
export async function clusterServers(): Promise<ClusterServers> {
  const { server, admin } = await sharedPostgres();
  requireTool(missing.redis());
  const name = `h_${crypto.randomUUID().replaceAll("-", "")}`;
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  const redis = await startRedis();
  const env = clusterEnv(url.href, redis.url);
  return {
    env,
    initialise: initialiser(() => env),
    async stop() {
      await redis.stop();
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

export interface OwnClusterServers extends ClusterServers {
  postgres: RestartableServer;
  redis: RestartableServer;
}

/**
 * A PostgreSQL and a Redis of the caller's own, not the process's shared PostgreSQL: for a test
 * that stops and starts them, which must not reach other harnesses. `password` goes into the
 * database URL (trust authentication ignores it), for a test that looks for it where it must not be.
 */
export async function ownClusterServers(opts: { password?: string } = {}): Promise<OwnClusterServers> {
  requireTool(missing.postgres());
  requireTool(missing.redis());
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  const admin = new SQL(postgres.url, { max: 1 });
  await admin.unsafe(`CREATE DATABASE own`);
  await admin.close();
  const url = new URL(postgres.url);
  url.pathname = "/own";
  if (opts.password !== undefined) url.password = opts.password;
  const env = clusterEnv(url.href, redis.url);
  return {
    postgres, redis,
    env,
    initialise: initialiser(() => env),
    async stop() {
      await redis.stop();
      await postgres.stop();
    },
  };
}
