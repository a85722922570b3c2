/**
 * Configuration: one schema for every TOLLGATE_* variable. `loadConfig` reports every problem at
 * once so an operator fixes the environment in one go; `main.ts` turns them into exit code 78.
 * The variables' descriptions for `tollgate help` are in config-variables.ts.
 */
import { CONFIG_VARIABLES } from "./config-variables.ts";
import type { LogFormatSetting, LogLevel } from "./lib/logger.ts";
import { parseCidr, type AddressRange } from "./lib/cidr.ts";
import { MiB as QUOTA_MIB, QUOTAS, type WorkspaceQuotas } from "./lib/quotas.ts";

export interface Config {
  dataDir: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Value of the bootstrap root key on first start; generated when unset. */
  rootKey: string | undefined;
  /** base64 of 32 bytes; generated into `<dataDir>/master.key` when unset. */
  masterKey: Uint8Array | undefined;
  /** Base of error `type` URLs; the service's own `/docs` when unset. */
  docsUrl: string | undefined;
  logLevel: LogLevel;
  /** One JSON object per line, or `<time> <LEVEL> <msg> key=value …` for a human. */
  logFormat: LogFormatSetting;
  ratelimitFlushMs: number;
  /**
   * Memory of live rate-limit windows in MiB, in all and per workspace, as the limiter counts it
   * (a window's worst-case cost: services/ratelimit/workspace-windows.ts).
   */
  ratelimitMemoryMiB: number;
  ratelimitWorkspaceMemoryMiB: number;
  /**
   * Memory in MiB of the rate-limit namespaces and overrides held in memory, in all and per workspace
   * (least recently used dropped beyond; estimated as services/ratelimit/namespace-cache.ts says).
   */
  ratelimitNamespaceCacheMiB: { total: number; workspace: number };
  /** Live wildcard overrides one rate-limit namespace may hold (every check tries each of them). */
  ratelimitWildcardOverrides: number;
  auditRetentionDays: number;
  /** Time limit of one analytics.getVerifications query, from when a query process takes it. */
  analyticsQueryTimeoutMs: number;
  /** Analytics query processes, shared by every workspace. */
  analyticsQueryProcesses: number;
  /** Per workspace: analytics queries running at once, and waiting beyond those (429 past both). */
  analyticsQueriesPerWorkspace: { running: number; waiting: number };
  /** true (TOLLGATE_V1_PATHS=on) serves v1's keys.verifyKey and ratelimits.limit, a migration aid (routes/v1). */
  v1Paths: boolean;
  /** false (TOLLGATE_ANALYTICS=off) skips recording verification events, e.g. to measure their cost. */
  recordVerifications: boolean;
  /** How late a buffered verification event may be written. */
  analyticsFlushMs: number;
  /** Rate-limit decision rows (namespace × minute) held in memory between flushes; decisions for new rows beyond are dropped. */
  analyticsRatelimitPendingRows: number;
  /** Days each analytics table keeps its rows (rollups by bucket start). */
  analyticsRetentionDays: AnalyticsRetentionDays;
  keyCacheSize: number;
  /** Memory the key cache may hold, in MiB (estimated): 7/8 for key snapshots, 1/8 for the values they share. */
  keyCacheMb: number;
  /** Keys holding thousands of permissions loaded at once, each in slices on a read-only SQLite connection of its own; others wait. */
  keySlicedLoads: number;
  /** Bytes of items one list page may hold; a page always holds at least one (services/pages). */
  listPageBytes: number;
  /** Root keys not found, remembered by hash: at most `size`, each for `ttlMs` (services/auth/unknown-root-keys.ts). */
  unknownRootKeys: { size: number; ttlMs: number };
  /**
   * How long a stop waits for requests in flight before it closes their connections. The default
   * leaves the flushes and the checkpoint (milliseconds) room to end the whole stop within 5 s.
   */
  shutdownTimeoutMs: number;
  /** Client addresses that may read GET /metrics. */
  metricsAllow: AddressRange[];
  /** APIs with their own series in tollgate_verifications_by_api_total; the rest share `other`. */
  metricsMaxApis: number;
  /** Host names (besides IP literals and `localhost`) under which /metrics and the console answer. */
  allowedHosts: string[];
  /**
   * Proxies whose X-Forwarded-For names the client in the audit log. None by default: trusting
   * loopback would let any local process write any address into the audit log.
   */
  trustedProxies: AddressRange[];
  /** Bounds of every connection and request (http/body-reader.ts, http/in-flight.ts, boot.ts). */
  http: HttpBounds;
  /** The cluster mode's servers (TOLLGATE_DATABASE_URL and TOLLGATE_REDIS_URL); undefined: the embedded mode. */
  cluster: ClusterConfig | undefined;
  /** What one workspace's records may take (lib/quotas.ts: TOLLGATE_WORKSPACE_*); storage in bytes. */
  workspaceQuotas: WorkspaceQuotas;
}

export interface ClusterConfig {
  /** postgres:// URL of the database that holds every record. */
  databaseUrl: string;
  /** Connections this node keeps to PostgreSQL. */
  databasePoolSize: number;
  /** redis:// URL of the server that holds the rate-limit windows. */
  redisUrl: string;
  /**
   * What a rate limit answers while Redis cannot be reached: `open` lets the request through (as
   * if under its limit), `closed` refuses it (as if limited).
   */
  redisUnreachable: "open" | "closed";
  /** How often a node looks for changes whose notice it missed (storage/pg/changes.ts). */
  changePollMs: number;
  /** How long a request waits for PostgreSQL (a unit of work, a key's cold load) before it answers service_unavailable. */
  databaseTimeoutMs: number;
  /** Root keys not cached looked up in PostgreSQL at once; a few more wait, 503 beyond (services/auth/lookup-gate.ts). */
  rootKeyLookups: number;
  /** Serve even though the data dir holds a box's tollgate.db (src/cluster-refusals.ts). */
  ignoreBoxDatabase: boolean;
}

export interface HttpBounds {
  /** Seconds a connection may send nothing before it is closed (Bun's idleTimeout: whole seconds, at most 255). */
  idleTimeoutSeconds: number;
  /** How long a request's body may take to arrive, from the request's start; 408 beyond. */
  bodyTimeoutMs: number;
  /** Requests answered at once; 503 with Retry-After beyond. */
  maxRequestsInFlight: number;
  /** Percent of those that requests not yet authenticated (a cluster node's root-key lookup), and one client address, may hold. */
  unauthenticatedInFlightPercent: number;
  perAddressInFlightPercent: number;
  /** Body bytes all requests together may hold while their bodies are read; 503 beyond. */
  bodyBufferBytes: number;
}

const MiB = 1024 * 1024;

/** The HTTP bounds' defaults. Bodies: six at the largest route limit, room on a 1 GB machine; in flight: far above the benchmarks' 50 connections. */
export const DEFAULT_HTTP_BOUNDS: HttpBounds = { idleTimeoutSeconds: 10, bodyTimeoutMs: 10_000, maxRequestsInFlight: 1024, unauthenticatedInFlightPercent: 25, perAddressInFlightPercent: 50, bodyBufferBytes: 64 * MiB };

export interface AnalyticsRetentionDays {
  raw: number;
  minute: number;
  hour: number;
  day: number;
  month: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

interface Reader {
  env: Env;
  problems: string[];
  /** Each variable read and the value it took, as text (undefined: unset, no default). */
  effective: Map<string, string | undefined>;
}

/** Records the value `name` took and returns it. */
function took<T>(r: Reader, name: string, value: T, text: string | undefined = value === undefined ? undefined : String(value)): T {
  r.effective.set(name, text);
  return value;
}

function str(r: Reader, name: string, fallback: string): string {
  const v = r.env[name];
  return took(r, name, v === undefined || v === "" ? fallback : v);
}

function int(r: Reader, name: string, fallback: number, min: number, max: number): number {
  const raw = r.env[name];
  if (raw === undefined || raw === "") return took(r, name, fallback);
  if (!/^\d+$/.test(raw.trim())) {
    r.problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return fallback;
  }
  const n = Number(raw.trim());
  if (n < min || n > max) {
    r.problems.push(`${name} must be from ${min} to ${max}, got ${n}`);
    return fallback;
  }
  return took(r, name, n);
}

function oneOf<T extends string>(r: Reader, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = r.env[name];
  if (raw === undefined || raw === "") return took(r, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) {
    r.problems.push(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
    return fallback;
  }
  return took(r, name, raw as T);
}

function masterKey(r: Reader, name: string): Uint8Array | undefined {
  const raw = r.env[name];
  if (raw === undefined || raw === "") return took(r, name, undefined);
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(raw.trim()) ? Buffer.from(raw.trim(), "base64") : undefined;
  if (!bytes || bytes.length !== 32) {
    r.problems.push(`${name} must be the base64 of exactly 32 bytes (for example from \`openssl rand -base64 32\`)`);
    return undefined;
  }
  return took(r, name, new Uint8Array(bytes), raw.trim());
}

function rootKey(r: Reader, name: string): string | undefined {
  const raw = r.env[name];
  if (raw === undefined || raw === "") return took(r, name, undefined);
  if (raw.length < 16 || raw.length > 512 || /\s/.test(raw)) {
    r.problems.push(`${name} must be 16 to 512 characters without white space`);
    return undefined;
  }
  return took(r, name, raw);
}

function url(r: Reader, name: string): string | undefined {
  const raw = r.env[name];
  if (raw === undefined || raw === "") return took(r, name, undefined);
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol");
    return took(r, name, raw.replace(/\/+$/, ""));
  } catch {
    r.problems.push(`${name} must be an http(s) URL, got "${raw}"`);
    return undefined;
  }
}

/** A URL whose scheme is one of `protocols` (e.g. "postgres:"), or undefined when unset. */
function serverUrl(r: Reader, name: string, protocols: readonly string[]): string | undefined {
  const raw = r.env[name];
  if (raw === undefined || raw === "") return took(r, name, undefined);
  const parsed = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!parsed || !protocols.includes(parsed.protocol) || parsed.hostname === "") {
    // Not echoed: the value may hold a password.
    r.problems.push(`${name} must be a ${protocols.map((p) => `${p}//`).join(" or ")} URL with a host`);
    return undefined;
  }
  return took(r, name, raw);
}

/** The cluster mode: both servers or neither. */
function cluster(r: Reader): ClusterConfig | undefined {
  const databaseUrl = serverUrl(r, "TOLLGATE_DATABASE_URL", ["postgres:", "postgresql:"]);
  const redisUrl = serverUrl(r, "TOLLGATE_REDIS_URL", ["redis:", "rediss:"]);
  const databasePoolSize = int(r, "TOLLGATE_DATABASE_POOL", 10, 1, 1000);
  const redisUnreachable = oneOf(r, "TOLLGATE_REDIS_UNREACHABLE", "open", ["open", "closed"] as const);
  const changePollMs = int(r, "TOLLGATE_CLUSTER_CHANGE_POLL_MS", 100, 10, 60_000);
  const databaseTimeoutMs = int(r, "TOLLGATE_DATABASE_TIMEOUT_MS", 10_000, 100, 600_000);
  const rootKeyLookups = int(r, "TOLLGATE_ROOT_KEY_LOOKUPS", 2, 1, 1000);
  const ignoreBoxDatabase = oneOf(r, "TOLLGATE_CLUSTER_IGNORE_BOX_DATABASE", "off", ["on", "off"] as const) === "on";
  const setDatabase = (r.env.TOLLGATE_DATABASE_URL ?? "") !== "";
  const setRedis = (r.env.TOLLGATE_REDIS_URL ?? "") !== "";
  if (setDatabase !== setRedis) {
    r.problems.push(`the cluster mode needs both TOLLGATE_DATABASE_URL and TOLLGATE_REDIS_URL (${setDatabase ? "TOLLGATE_REDIS_URL" : "TOLLGATE_DATABASE_URL"} is unset); set neither for the embedded mode`);
  }
  if (databaseUrl === undefined || redisUrl === undefined) return undefined;
  return { databaseUrl, databasePoolSize, redisUrl, redisUnreachable, changePollMs, databaseTimeoutMs, rootKeyLookups, ignoreBoxDatabase };
}

function cidrList(r: Reader, name: string, fallback: string): AddressRange[] {
  const raw = str(r, name, fallback);
  if (raw.trim() === "none") return took(r, name, [], "none");
  const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
  const ranges = items.map(parseCidr);
  const bad = items.filter((_, i) => ranges[i] === undefined);
  if (bad.length > 0) {
    r.problems.push(`${name} must be a comma-separated list of IP addresses or CIDR ranges (e.g. 127.0.0.0/8,::1), got: ${bad.join(", ")}`);
    return cidrList({ env: {}, problems: [], effective: new Map() }, name, fallback);
  }
  return took(r, name, ranges.filter((x) => x !== undefined), items.join(","));
}

/** Host names, comma-separated, lower-cased; none by default. */
function hostList(r: Reader, name: string): string[] {
  const items = str(r, name, "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  const bad = items.filter((h) => !/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(h)).join(", ");
  return took(r, name, bad ? (r.problems.push(`${name} must be a comma-separated list of host names (e.g. tollgate.internal), got: ${bad}`), []) : items, items.join(","));
}

/** The window caps; the per-workspace one defaults to at most the total. */
function ratelimitMemory(r: Reader): Pick<Config, "ratelimitMemoryMiB" | "ratelimitWorkspaceMemoryMiB"> {
  const total = int(r, "TOLLGATE_RATELIMIT_MEMORY_MB", 64, 1, 1_048_576);
  const perWorkspace = int(r, "TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB", Math.min(32, total), 1, 1_048_576);
  if (perWorkspace > total) r.problems.push(`TOLLGATE_RATELIMIT_WORKSPACE_MEMORY_MB (${perWorkspace}) must not exceed TOLLGATE_RATELIMIT_MEMORY_MB (${total})`);
  return { ratelimitMemoryMiB: total, ratelimitWorkspaceMemoryMiB: Math.min(perWorkspace, total) };
}

/** The namespace cache's caps; the per-workspace one defaults to at most the total. */
function namespaceCacheMemory(r: Reader): Config["ratelimitNamespaceCacheMiB"] {
  const total = int(r, "TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB", 32, 1, 1_048_576);
  const workspace = int(r, "TOLLGATE_RATELIMIT_NAMESPACE_CACHE_WORKSPACE_MB", Math.min(8, total), 1, 1_048_576);
  if (workspace > total) r.problems.push(`TOLLGATE_RATELIMIT_NAMESPACE_CACHE_WORKSPACE_MB (${workspace}) must not exceed TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB (${total})`);
  return { total, workspace: Math.min(workspace, total) };
}

/** The workspace quotas, one TOLLGATE_WORKSPACE_* variable each (lib/quotas.ts); storage read in MiB, kept in bytes. */
function workspaceQuotas(r: Reader): WorkspaceQuotas {
  const limits = QUOTAS.map((q) => [q.name, int(r, q.variable, q.defaultValue, 1, q.max) * (q.name === "storage" ? QUOTA_MIB : 1)]);
  return Object.fromEntries(limits) as WorkspaceQuotas;
}

/** Reads every TOLLGATE_* variable; throws ConfigError listing all problems. */
export function loadConfig(env: Env): Config {
  return readConfig(env).config;
}

/** Variables whose values are secrets: `effectiveSettings` shows only whether they are set. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set(["TOLLGATE_ROOT_KEY", "TOLLGATE_MASTER_KEY", "TOLLGATE_DATABASE_URL", "TOLLGATE_REDIS_URL"]);

/**
 * Every variable of CONFIG_VARIABLES and the value it takes in `env` (defaults included), secrets
 * masked; undefined for one unset without a default. Throws ConfigError like loadConfig.
 */
export function effectiveSettings(env: Env): Array<[string, string | undefined]> {
  const { effective } = readConfig(env);
  return CONFIG_VARIABLES.map(([name]) => {
    const value = effective.get(name);
    return [name, SECRET_VARIABLES.has(name) && value !== undefined ? "********" : value];
  });
}

function readConfig(env: Env): { config: Config; effective: Map<string, string | undefined> } {
  const r: Reader = { env, problems: [], effective: new Map() };
  const config: Config = {
    dataDir: str(r, "TOLLGATE_DATA_DIR", "./data"),
    host: str(r, "TOLLGATE_HOST", "127.0.0.1"),
    port: int(r, "TOLLGATE_PORT", 8080, 0, 65535),
    rootKey: rootKey(r, "TOLLGATE_ROOT_KEY"),
    masterKey: masterKey(r, "TOLLGATE_MASTER_KEY"),
    docsUrl: url(r, "TOLLGATE_DOCS_URL"),
    logLevel: oneOf(r, "TOLLGATE_LOG_LEVEL", "info", ["debug", "info", "warn", "error"] as const),
    logFormat: oneOf(r, "TOLLGATE_LOG_FORMAT", "auto", ["auto", "json", "text"] as const),
    ratelimitFlushMs: int(r, "TOLLGATE_RATELIMIT_FLUSH_MS", 1000, 50, 60_000),
    ...ratelimitMemory(r),
    ratelimitNamespaceCacheMiB: namespaceCacheMemory(r),
    ratelimitWildcardOverrides: int(r, "TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES", 100, 0, 10_000),
    auditRetentionDays: int(r, "TOLLGATE_AUDIT_RETENTION_DAYS", 90, 1, 36_500),
    analyticsQueryTimeoutMs: int(r, "TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS", 5000, 100, 600_000),
    analyticsQueryProcesses: int(r, "TOLLGATE_ANALYTICS_QUERY_PROCESSES", 2, 1, 64),
    analyticsQueriesPerWorkspace: {
      running: int(r, "TOLLGATE_ANALYTICS_QUERIES_PER_WORKSPACE", 1, 1, 64),
      waiting: int(r, "TOLLGATE_ANALYTICS_QUEUE_PER_WORKSPACE", 8, 0, 1000),
    },
    v1Paths: oneOf(r, "TOLLGATE_V1_PATHS", "off", ["on", "off"] as const) === "on",
    recordVerifications: oneOf(r, "TOLLGATE_ANALYTICS", "on", ["on", "off"] as const) === "on",
    analyticsFlushMs: int(r, "TOLLGATE_ANALYTICS_FLUSH_MS", 1000, 50, 60_000),
    analyticsRatelimitPendingRows: int(r, "TOLLGATE_ANALYTICS_RATELIMIT_PENDING_ROWS", 50_000, 1, 10_000_000),
    analyticsRetentionDays: {
      raw: int(r, "TOLLGATE_ANALYTICS_RAW_RETENTION_DAYS", 90, 1, 36_500),
      minute: int(r, "TOLLGATE_ANALYTICS_MINUTE_RETENTION_DAYS", 90, 1, 36_500),
      hour: int(r, "TOLLGATE_ANALYTICS_HOUR_RETENTION_DAYS", 90, 1, 36_500),
      day: int(r, "TOLLGATE_ANALYTICS_DAY_RETENTION_DAYS", 365, 1, 36_500),
      month: int(r, "TOLLGATE_ANALYTICS_MONTH_RETENTION_DAYS", 1095, 1, 36_500),
    },
    keyCacheSize: int(r, "TOLLGATE_KEY_CACHE_SIZE", 200_000, 0, 10_000_000),
    keyCacheMb: int(r, "TOLLGATE_KEY_CACHE_MB", 256, 1, 1_048_576),
    keySlicedLoads: int(r, "TOLLGATE_KEY_SLICED_LOADS", 2, 1, 64),
    listPageBytes: int(r, "TOLLGATE_LIST_PAGE_BYTES", 4 * MiB, 1024, 1024 * MiB),
    unknownRootKeys: { size: int(r, "TOLLGATE_UNKNOWN_ROOT_KEYS", 10_000, 0, 1_000_000), ttlMs: int(r, "TOLLGATE_UNKNOWN_ROOT_KEY_TTL_MS", 10_000, 100, 3_600_000) },
    shutdownTimeoutMs: int(r, "TOLLGATE_SHUTDOWN_TIMEOUT_MS", 4_000, 0, 600_000),
    metricsAllow: cidrList(r, "TOLLGATE_METRICS_ALLOW", "127.0.0.0/8,::1"),
    metricsMaxApis: int(r, "TOLLGATE_METRICS_MAX_APIS", 1_000, 0, 100_000),
    trustedProxies: cidrList(r, "TOLLGATE_TRUSTED_PROXIES", "none"),
    allowedHosts: hostList(r, "TOLLGATE_ALLOWED_HOSTS"),
    http: {
      idleTimeoutSeconds: int(r, "TOLLGATE_IDLE_TIMEOUT_SECONDS", DEFAULT_HTTP_BOUNDS.idleTimeoutSeconds, 1, 255),
      bodyTimeoutMs: int(r, "TOLLGATE_BODY_TIMEOUT_MS", DEFAULT_HTTP_BOUNDS.bodyTimeoutMs, 100, 600_000),
      maxRequestsInFlight: int(r, "TOLLGATE_MAX_REQUESTS_IN_FLIGHT", DEFAULT_HTTP_BOUNDS.maxRequestsInFlight, 1, 1_000_000),
      unauthenticatedInFlightPercent: int(r, "TOLLGATE_UNAUTHENTICATED_IN_FLIGHT_PERCENT", DEFAULT_HTTP_BOUNDS.unauthenticatedInFlightPercent, 1, 100),
      perAddressInFlightPercent: int(r, "TOLLGATE_PER_ADDRESS_IN_FLIGHT_PERCENT", DEFAULT_HTTP_BOUNDS.perAddressInFlightPercent, 1, 100),
      // At least 10 MiB, so that one body at the largest route limit always fits.
      bodyBufferBytes: int(r, "TOLLGATE_BODY_BUFFER_MIB", DEFAULT_HTTP_BOUNDS.bodyBufferBytes / MiB, 10, 65_536) * MiB,
    },
    cluster: cluster(r),
    workspaceQuotas: workspaceQuotas(r),
  };
  if (config.cluster && config.masterKey === undefined) {
    r.problems.push("the cluster mode needs TOLLGATE_MASTER_KEY, the same on every node (recoverable keys made on one node are decrypted on another)");
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return { config, effective: r.effective };
}

export { CONFIG_VARIABLES };
