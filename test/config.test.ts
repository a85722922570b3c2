/** loadConfig(): the default of every variable and the values it accepts (what it refuses: config.problems.test.ts). */
import { describe, expect, test } from "bun:test";
import { CONFIG_VARIABLES, loadConfig } from "../src/config.ts";

const MASTER_KEY_32 = Buffer.alloc(32, 7).toString("base64");

describe("defaults", () => {
  test("an empty environment gives the documented default for every variable", () => {
    expect(loadConfig({})).toEqual({
      dataDir: "./data",
      host: "127.0.0.1",
      port: 8080,
      rootKey: undefined,
      masterKey: undefined,
      docsUrl: undefined,
      logLevel: "info",
      logFormat: "auto",
      ratelimitFlushMs: 1000,
      ratelimitMemoryMiB: 64,
      ratelimitWorkspaceMemoryMiB: 32,
      ratelimitNamespaceCacheMiB: { total: 32, workspace: 8 },
      ratelimitWildcardOverrides: 100,
      auditRetentionDays: 90,
      listPageBytes: 4 * 1024 * 1024,
      analyticsQueryTimeoutMs: 5000,
      analyticsQueryProcesses: 2,
      analyticsQueriesPerWorkspace: { running: 1, waiting: 8 },
      v1Paths: false,
      recordVerifications: true,
      analyticsFlushMs: 1000,
      analyticsRatelimitPendingRows: 50_000,
      analyticsRetentionDays: { raw: 90, minute: 90, hour: 90, day: 365, month: 1095 },
      keyCacheSize: 200_000,
      keyCacheMb: 256,
      keySlicedLoads: 2,
      unknownRootKeys: { size: 10_000, ttlMs: 10_000 },
      shutdownTimeoutMs: 4_000,
      metricsAllow: [{ address: "127.0.0.0", prefix: 8, family: "ipv4" }, { address: "::1", prefix: 128, family: "ipv6" }],
      metricsMaxApis: 1000,
      trustedProxies: [],
      allowedHosts: [],
      http: { idleTimeoutSeconds: 10, bodyTimeoutMs: 10_000, maxRequestsInFlight: 1024, unauthenticatedInFlightPercent: 25, perAddressInFlightPercent: 50, bodyBufferBytes: 64 * 1024 * 1024 },
      cluster: undefined,
      workspaceQuotas: { keys: 1_000_000, identities: 1_000_000, permissions: 10_000, roles: 1_000, namespaces: 10_000, storage: 1024 * 1024 * 1024 },
    });
  });

  test("empty strings count as unset", () => {
    const env = Object.fromEntries(CONFIG_VARIABLES.map(([name]) => [name, ""]));
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });

  test("variables that are not TOLLGATE_* are ignored", () => {
    expect(loadConfig({ PORT: "x", HOME: "/root" })).toEqual(loadConfig({}));
  });

  test("CONFIG_VARIABLES lists every variable loadConfig reads", () => {
    expect(CONFIG_VARIABLES.map(([name]) => name).sort()).toEqual([
      "TOLLGATE_ANALYTICS", "TOLLGATE_ANALYTICS_DAY_RETENTION_DAYS", "TOLLGATE_ANALYTICS_FLUSH_MS",
      "TOLLGATE_ANALYTICS_HOUR_RETENTION_DAYS", "TOLLGATE_ANALYTICS_MINUTE_RETENTION_DAYS", "TOLLGATE_ANALYTICS_MONTH_RETENTION_DAYS",
      "TOLLGATE_ANALYTICS_QUERIES_PER_WORKSPACE", "TOLLGATE_ANALYTICS_QUERY_PROCESSES", "TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS", "TOLLGATE_ANALYTICS_QUEUE_PER_WORKSPACE",
      "TOLLGATE_ANALYTICS_RATELIMIT_PENDING_ROWS", "TOLLGATE_ANALYTICS_RAW_RETENTION_DAYS", "TOLLGATE_AUDIT_RETENTION_DAYS", "TOLLGATE_DATA_DIR", "TOLLGATE_DOCS_URL", "TOLLGATE_HOST", "TOLLGATE_KEY_CACHE_MB", "TOLLGATE_KEY_CACHE_SIZE", "TOLLGATE_KEY_SLICED_LOADS",
      "TOLLGATE_LIST_PAGE_BYTES", "TOLLGATE_LOG_FORMAT", "TOLLGATE_LOG_LEVEL", "TOLLGATE_MASTER_KEY", "TOLLGATE_METRICS_ALLOW", "TOLLGATE_METRICS_MAX_APIS", "TOLLGATE_PORT", "TOLLGATE_RATELIMIT_FLUSH_MS",
      "TOLLGATE_RATELIMIT_MEMORY_MB", "TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB", "TOLLGATE_RATELIMIT_NAMESPACE_CACHE_WORKSPACE_MB", "TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB", "TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES", "TOLLGATE_ROOT_KEY",
      "TOLLGATE_SHUTDOWN_TIMEOUT_MS", "TOLLGATE_TRUSTED_PROXIES", "TOLLGATE_ALLOWED_HOSTS",
      "TOLLGATE_UNAUTHENTICATED_IN_FLIGHT_PERCENT", "TOLLGATE_PER_ADDRESS_IN_FLIGHT_PERCENT",
      "TOLLGATE_IDLE_TIMEOUT_SECONDS", "TOLLGATE_BODY_TIMEOUT_MS", "TOLLGATE_MAX_REQUESTS_IN_FLIGHT", "TOLLGATE_BODY_BUFFER_MIB",
      "TOLLGATE_DATABASE_URL", "TOLLGATE_REDIS_URL", "TOLLGATE_DATABASE_POOL", "TOLLGATE_REDIS_UNREACHABLE", "TOLLGATE_CLUSTER_CHANGE_POLL_MS",
      "TOLLGATE_DATABASE_TIMEOUT_MS", "TOLLGATE_V1_PATHS",
      "TOLLGATE_ROOT_KEY_LOOKUPS", "TOLLGATE_CLUSTER_IGNORE_BOX_DATABASE",
      "TOLLGATE_UNKNOWN_ROOT_KEYS", "TOLLGATE_UNKNOWN_ROOT_KEY_TTL_MS",
      "TOLLGATE_WORKSPACE_MAX_KEYS", "TOLLGATE_WORKSPACE_MAX_IDENTITIES", "TOLLGATE_WORKSPACE_MAX_PERMISSIONS",
      "TOLLGATE_WORKSPACE_MAX_ROLES", "TOLLGATE_WORKSPACE_MAX_NAMESPACES", "TOLLGATE_WORKSPACE_STORAGE_MB",
    ].sort());
  });
});

describe("valid values", () => {
  test("every variable is read", () => {
    const config = loadConfig({
      TOLLGATE_DATA_DIR: "/var/lib/tollgate",
      TOLLGATE_HOST: "::1",
      TOLLGATE_PORT: "9090",
      TOLLGATE_ROOT_KEY: "tg_root_0123456789abcdef",
      TOLLGATE_MASTER_KEY: MASTER_KEY_32,
      TOLLGATE_DOCS_URL: "https://docs.example.com/",
      TOLLGATE_LOG_LEVEL: "debug",
      TOLLGATE_LOG_FORMAT: "text",
      TOLLGATE_RATELIMIT_FLUSH_MS: "250",
      TOLLGATE_RATELIMIT_MEMORY_MB: "64",
      TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB: "16",
      TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB: "64",
      TOLLGATE_RATELIMIT_NAMESPACE_CACHE_WORKSPACE_MB: "2",
      TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES: "0",
      TOLLGATE_AUDIT_RETENTION_DAYS: "30",
      TOLLGATE_LIST_PAGE_BYTES: "65536",
      TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS: "300",
      TOLLGATE_ANALYTICS_QUERY_PROCESSES: "4",
      TOLLGATE_ANALYTICS_QUERIES_PER_WORKSPACE: "3",
      TOLLGATE_ANALYTICS_QUEUE_PER_WORKSPACE: "0",
      TOLLGATE_ANALYTICS: "off",
      TOLLGATE_V1_PATHS: "on",
      TOLLGATE_ANALYTICS_FLUSH_MS: "200",
      TOLLGATE_ANALYTICS_RATELIMIT_PENDING_ROWS: "7",
      TOLLGATE_ANALYTICS_RAW_RETENTION_DAYS: "7",
      TOLLGATE_ANALYTICS_MINUTE_RETENTION_DAYS: "8",
      TOLLGATE_ANALYTICS_HOUR_RETENTION_DAYS: "9",
      TOLLGATE_ANALYTICS_DAY_RETENTION_DAYS: "10",
      TOLLGATE_ANALYTICS_MONTH_RETENTION_DAYS: "11",
      TOLLGATE_KEY_CACHE_SIZE: "0",
      TOLLGATE_KEY_CACHE_MB: "16",
      TOLLGATE_UNKNOWN_ROOT_KEYS: "0",
      TOLLGATE_UNKNOWN_ROOT_KEY_TTL_MS: "100",
      TOLLGATE_SHUTDOWN_TIMEOUT_MS: "0",
      TOLLGATE_METRICS_ALLOW: "10.0.0.0/8, 192.0.2.7,fd00::/8",
      TOLLGATE_METRICS_MAX_APIS: "0",
      TOLLGATE_TRUSTED_PROXIES: "10.0.0.1",
      TOLLGATE_IDLE_TIMEOUT_SECONDS: "255",
      TOLLGATE_BODY_TIMEOUT_MS: "100",
      TOLLGATE_MAX_REQUESTS_IN_FLIGHT: "1",
      TOLLGATE_BODY_BUFFER_MIB: "10",
      TOLLGATE_DATABASE_URL: "postgres://tollgate:secret@db.internal:5432/tollgate",
      TOLLGATE_REDIS_URL: "redis://cache.internal:6379/0",
      TOLLGATE_DATABASE_POOL: "25",
      TOLLGATE_REDIS_UNREACHABLE: "closed",
      TOLLGATE_CLUSTER_CHANGE_POLL_MS: "250",
      TOLLGATE_DATABASE_TIMEOUT_MS: "2500",
      TOLLGATE_ALLOWED_HOSTS: "Tollgate.Internal, metrics.example.com",
      TOLLGATE_UNAUTHENTICATED_IN_FLIGHT_PERCENT: "10",
      TOLLGATE_PER_ADDRESS_IN_FLIGHT_PERCENT: "100",
      TOLLGATE_KEY_SLICED_LOADS: "3",
      TOLLGATE_ROOT_KEY_LOOKUPS: "7",
      TOLLGATE_CLUSTER_IGNORE_BOX_DATABASE: "on",
      TOLLGATE_WORKSPACE_MAX_KEYS: "10",
      TOLLGATE_WORKSPACE_MAX_IDENTITIES: "11",
      TOLLGATE_WORKSPACE_MAX_PERMISSIONS: "12",
      TOLLGATE_WORKSPACE_MAX_ROLES: "13",
      TOLLGATE_WORKSPACE_MAX_NAMESPACES: "14",
      TOLLGATE_WORKSPACE_STORAGE_MB: "2",
    });
    expect(config).toEqual({
      dataDir: "/var/lib/tollgate",
      host: "::1",
      port: 9090,
      rootKey: "tg_root_0123456789abcdef",
      masterKey: new Uint8Array(Buffer.alloc(32, 7)),
      docsUrl: "https://docs.example.com",
      logLevel: "debug",
      logFormat: "text",
      ratelimitFlushMs: 250,
      ratelimitMemoryMiB: 64,
      ratelimitWorkspaceMemoryMiB: 16,
      ratelimitNamespaceCacheMiB: { total: 64, workspace: 2 },
      ratelimitWildcardOverrides: 0,
      auditRetentionDays: 30,
      listPageBytes: 65_536,
      analyticsQueryTimeoutMs: 300,
      analyticsQueryProcesses: 4,
      analyticsQueriesPerWorkspace: { running: 3, waiting: 0 },
      v1Paths: true,
      recordVerifications: false,
      analyticsFlushMs: 200,
      analyticsRatelimitPendingRows: 7,
      analyticsRetentionDays: { raw: 7, minute: 8, hour: 9, day: 10, month: 11 },
      keyCacheSize: 0,
      keyCacheMb: 16,
      keySlicedLoads: 3,
      unknownRootKeys: { size: 0, ttlMs: 100 },
      shutdownTimeoutMs: 0,
      metricsAllow: [
        { address: "10.0.0.0", prefix: 8, family: "ipv4" },
        { address: "192.0.2.7", prefix: 32, family: "ipv4" },
        { address: "fd00::", prefix: 8, family: "ipv6" },
      ],
      metricsMaxApis: 0,
      trustedProxies: [{ address: "10.0.0.1", prefix: 32, family: "ipv4" }],
      allowedHosts: ["tollgate.internal", "metrics.example.com"],
      http: { idleTimeoutSeconds: 255, bodyTimeoutMs: 100, maxRequestsInFlight: 1, unauthenticatedInFlightPercent: 10, perAddressInFlightPercent: 100, bodyBufferBytes: 10 * 1024 * 1024 },
      cluster: {
        databaseUrl: "postgres://tollgate:secret@db.internal:5432/tollgate",
        databasePoolSize: 25,
        redisUrl: "redis://cache.internal:6379/0",
        redisUnreachable: "closed",
        changePollMs: 250,
        databaseTimeoutMs: 2500,
        rootKeyLookups: 7,
        ignoreBoxDatabase: true,
      },
      workspaceQuotas: { keys: 10, identities: 11, permissions: 12, roles: 13, namespaces: 14, storage: 2 * 1024 * 1024 },
    });
  });

  test("TOLLGATE_TRUSTED_PROXIES=none trusts no proxy, as the default does", () => {
    expect(loadConfig({ TOLLGATE_TRUSTED_PROXIES: "none" }).trustedProxies).toEqual([]);
  });

  test("the per-workspace window memory defaults to 32 MiB, or the total when that is smaller", () => {
    expect(loadConfig({ TOLLGATE_RATELIMIT_MEMORY_MB: "512" })).toMatchObject({ ratelimitMemoryMiB: 512, ratelimitWorkspaceMemoryMiB: 32 });
    expect(loadConfig({ TOLLGATE_RATELIMIT_MEMORY_MB: "32" })).toMatchObject({ ratelimitMemoryMiB: 32, ratelimitWorkspaceMemoryMiB: 32 });
  });

  test("the per-workspace namespace cache defaults to 8 MiB, or the total when that is smaller", () => {
    expect(loadConfig({ TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB: "256" }).ratelimitNamespaceCacheMiB).toEqual({ total: 256, workspace: 8 });
    expect(loadConfig({ TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB: "4" }).ratelimitNamespaceCacheMiB).toEqual({ total: 4, workspace: 4 });
  });

  test("port 0 (any free port) and the bounds 65535 are allowed", () => {
    expect(loadConfig({ TOLLGATE_PORT: "0" }).port).toBe(0);
    expect(loadConfig({ TOLLGATE_PORT: "65535" }).port).toBe(65535);
  });

  test.each(["debug", "info", "warn", "error"])("log level %s", (level) => {
    expect(loadConfig({ TOLLGATE_LOG_LEVEL: level }).logLevel).toBe(level as "debug");
  });

  test("the cluster mode: both servers set, with defaults for the rest (pool 10, fail open, poll 100 ms, PostgreSQL waited 10 s)", () => {
    expect(loadConfig({ TOLLGATE_DATABASE_URL: "postgresql://localhost/tg", TOLLGATE_REDIS_URL: "rediss://localhost", TOLLGATE_MASTER_KEY: MASTER_KEY_32 }).cluster).toEqual({
      databaseUrl: "postgresql://localhost/tg", databasePoolSize: 10, redisUrl: "rediss://localhost", redisUnreachable: "open", changePollMs: 100, databaseTimeoutMs: 10_000, rootKeyLookups: 2, ignoreBoxDatabase: false,
    });
  });

  test("the master key is the 32 decoded bytes", () => {
    const bytes = new Uint8Array(32).map((_, i) => i);
    expect(loadConfig({ TOLLGATE_MASTER_KEY: Buffer.from(bytes).toString("base64") }).masterKey).toEqual(bytes);
  });
});
