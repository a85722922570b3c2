/**
 * `GET /metrics` in the Prometheus text format, and the registry behind it. One registry per app
 * (no module state), fed by the access-log hook once per request: a few map lookups and integer
 * increments, no allocation once a route has been seen. Gauges (cache, database size, requests in
 * flight, memory) are read only when scraped; a cluster node, which has no database file, reports
 * no database size. Only clients in TOLLGATE_METRICS_ALLOW may read it;
 * others get the same 404 as an unknown route, so the endpoint is invisible to them.
 */
import { Elysia } from "elysia";
import { AppError } from "../errors/app-error.ts";
import { AddressAllowList, type AddressRange } from "../lib/cidr.ts";
import { Ok } from "./envelope.ts";
import { requireAllowedHost } from "./request-host.ts";

/** Latency buckets in seconds: sub-millisecond resolution where the hot paths live. */
const BUCKETS_S = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

/** Label value for requests no route matched; keeps made-up paths from creating new series. */
export const UNMATCHED_ROUTE = "unmatched";

const VERIFY_ROUTE = "/v2/keys.verifyKey";
const LIMIT_ROUTES = new Set(["/v2/ratelimit.limit", "/v2/ratelimits.limit"]);
const MULTI_LIMIT_ROUTE = "/v2/ratelimit.multiLimit";

class RouteStats {
  readonly byStatus = new Map<number, number>();
  /** Non-cumulative counts per bucket; the last slot is above the largest bound. */
  readonly buckets = new Float64Array(BUCKETS_S.length + 1);
  sumS = 0;
  count = 0;
}

/** What the scrape reads from the rest of the service. */
export interface MetricsSources {
  keyCache(): { hits: number; misses: number; size: number; sizeBytes: number };
  /** The in-memory limiter's live windows and what its memory caps gave up or refused (none on a cluster node: its windows are in Redis). */
  ratelimitWindows?(): { windows: number; bytes: number; evicted: number; unkept: number };
  /** Rate-limit namespaces held in memory with their overrides. */
  ratelimitNamespaces(): { entries: number; bytes: number };
  /** tollgate.db's and analytics.db's sizes; absent on a cluster node, which keeps its records and analytics in PostgreSQL. */
  databaseSizeBytes?(): number;
  analyticsDatabaseSizeBytes?(): number;
  /** Requests received and not yet answered, the scrape itself left out. */
  requestsInFlight(): number;
  /** v2 operations holding a slot of the in-flight cap, by whether their root key is known yet (http/in-flight.ts). */
  operationsInFlight?(): { authenticated: number; unauthenticated: number };
  /** Verifications of keys of an API: API id (or `other` beyond the cap), code, count. */
  verificationsByApi(): Iterable<[apiId: string, code: string, count: number]>;
  /** What `tollgate version` prints, and the commit the binary was built from. */
  build: { version: string; commit: string };
  /** A cluster node's shared servers: up or down, and the requests their absence made fail open or closed. */
  dependencies?(): Array<{ name: string; up: boolean; failedOpen: number; failedClosed: number }>;
  /** A cluster node's credit-spend statements given up on: still to settle, and how the others were settled. */
  creditSettlement?(): { unsettled: number; cancelled: number; refunded: number; dropped: number };
}

export class MetricsRegistry {
  private readonly routes = new Map<string, RouteStats>();
  private readonly verifications = new Map<string, number>();
  private ratelimitPassed = 0;
  private ratelimitDenied = 0;

  /** One answered request: its route pattern, status and duration. */
  observeRequest(route: string, status: number, durationMs: number): void {
    let stats = this.routes.get(route);
    if (!stats) {
      stats = new RouteStats();
      this.routes.set(route, stats);
    }
    stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
    const seconds = durationMs / 1000;
    let i = 0;
    while (i < BUCKETS_S.length && seconds > BUCKETS_S[i]!) i++;
    stats.buckets[i]!++;
    stats.sumS += seconds;
    stats.count++;
  }

  /** The outcome a hot route answered with: a verification code, a rate-limit decision. */
  observeResult(route: string, value: unknown): void {
    if (!(value instanceof Ok)) return;
    const data = value.data as { code?: unknown; success?: unknown; passed?: unknown } | null;
    if (!data) return;
    if (route === VERIFY_ROUTE) {
      if (typeof data.code === "string") this.verifications.set(data.code, (this.verifications.get(data.code) ?? 0) + 1);
    } else if (LIMIT_ROUTES.has(route)) {
      this.countDecision(data.success === true);
    } else if (route === MULTI_LIMIT_ROUTE) {
      this.countDecision(data.passed === true);
    }
  }

  private countDecision(passed: boolean): void {
    if (passed) this.ratelimitPassed++;
    else this.ratelimitDenied++;
  }

  /** The exposition text. */
  render(sources: MetricsSources): string {
    const out: string[] = [];
    this.renderRequests(out);
    family(out, "tollgate_verifications_total", "counter", "Key verifications answered, by code.");
    for (const [code, n] of this.verifications) out.push(`tollgate_verifications_total{code="${label(code)}"} ${n}`);
    family(out, "tollgate_verifications_by_api_total", "counter", "Verifications of keys of an API, by API id and code; APIs beyond TOLLGATE_METRICS_MAX_APIS count as api_id=\"other\".");
    for (const [apiId, code, n] of sources.verificationsByApi()) out.push(`tollgate_verifications_by_api_total{api_id="${label(apiId)}",code="${label(code)}"} ${n}`);
    family(out, "tollgate_ratelimit_decisions_total", "counter", "ratelimit(s).limit and multiLimit outcomes.");
    out.push(`tollgate_ratelimit_decisions_total{decision="passed"} ${this.ratelimitPassed}`);
    out.push(`tollgate_ratelimit_decisions_total{decision="denied"} ${this.ratelimitDenied}`);
    const cache = sources.keyCache();
    family(out, "tollgate_key_cache_hits_total", "counter", "Verification cache lookups answered from memory.");
    out.push(`tollgate_key_cache_hits_total ${cache.hits}`);
    family(out, "tollgate_key_cache_misses_total", "counter", "Verification cache lookups that read SQLite.");
    out.push(`tollgate_key_cache_misses_total ${cache.misses}`);
    family(out, "tollgate_key_cache_hit_ratio", "gauge", "hits / (hits + misses) since start; 0 before the first lookup.");
    const lookups = cache.hits + cache.misses;
    out.push(`tollgate_key_cache_hit_ratio ${lookups === 0 ? 0 : cache.hits / lookups}`);
    family(out, "tollgate_key_cache_entries", "gauge", "Key snapshots in the verification cache.");
    out.push(`tollgate_key_cache_entries ${cache.size}`);
    family(out, "tollgate_key_cache_bytes", "gauge", "Estimated memory of the snapshots in the verification cache (bounded by TOLLGATE_KEY_CACHE_MB).");
    out.push(`tollgate_key_cache_bytes ${cache.sizeBytes}`);
    this.renderRatelimitMemory(out, sources);
    if (sources.databaseSizeBytes) {
      family(out, "tollgate_database_size_bytes", "gauge", "Size of tollgate.db (pages in use and free), without the WAL.");
      out.push(`tollgate_database_size_bytes ${sources.databaseSizeBytes()}`);
    }
    if (sources.analyticsDatabaseSizeBytes) {
      family(out, "tollgate_analytics_database_size_bytes", "gauge", "Size of analytics.db (verification events and rollups; pages in use and free), without the WAL.");
      out.push(`tollgate_analytics_database_size_bytes ${sources.analyticsDatabaseSizeBytes()}`);
    }
    family(out, "tollgate_http_requests_in_flight", "gauge", "Requests received and not yet answered (those refused at once included), this scrape left out.");
    out.push(`tollgate_http_requests_in_flight ${sources.requestsInFlight()}`);
    if (sources.operationsInFlight) {
      const held = sources.operationsInFlight();
      family(out, "tollgate_http_operations_in_flight", "gauge", "v2 operations holding a slot of TOLLGATE_MAX_REQUESTS_IN_FLIGHT, by whether their root key is known yet (a cluster node's lookup).");
      out.push(`tollgate_http_operations_in_flight{class="authenticated"} ${held.authenticated}`, `tollgate_http_operations_in_flight{class="unauthenticated"} ${held.unauthenticated}`);
    }
    family(out, "tollgate_process_resident_memory_bytes", "gauge", "Resident memory of the process.");
    out.push(`tollgate_process_resident_memory_bytes ${process.memoryUsage.rss()}`);
    renderCluster(out, sources);
    renderProcess(out, sources.build);
    return out.join("\n") + "\n";
  }

  private renderRatelimitMemory(out: string[], sources: MetricsSources): void {
    const w = sources.ratelimitWindows?.();
    if (w) {
      family(out, "tollgate_ratelimit_windows", "gauge", "Live rate-limit windows in memory.");
      out.push(`tollgate_ratelimit_windows ${w.windows}`);
      family(out, "tollgate_ratelimit_window_bytes", "gauge", "Memory charged to live rate-limit windows (their worst-case cost), against TOLLGATE_RATELIMIT_MEMORY_MB.");
      out.push(`tollgate_ratelimit_window_bytes ${w.bytes}`);
      family(out, "tollgate_ratelimit_windows_evicted_total", "counter", "Windows a workspace gave up (its least recently used) to make room for a new one.");
      out.push(`tollgate_ratelimit_windows_evicted_total ${w.evicted}`);
      family(out, "tollgate_ratelimit_windows_unkept_total", "counter", "Checks answered from an empty window without keeping it: the memory caps left their workspace nothing to give up.");
      out.push(`tollgate_ratelimit_windows_unkept_total ${w.unkept}`);
    }
    const ns = sources.ratelimitNamespaces();
    family(out, "tollgate_ratelimit_namespace_cache_entries", "gauge", "Rate-limit namespaces held in memory.");
    out.push(`tollgate_ratelimit_namespace_cache_entries ${ns.entries}`);
    family(out, "tollgate_ratelimit_namespace_cache_bytes", "gauge", "Estimated memory of the namespaces held and their overrides, against TOLLGATE_RATELIMIT_NAMESPACE_CACHE_MB.");
    out.push(`tollgate_ratelimit_namespace_cache_bytes ${ns.bytes}`);
  }

  private renderRequests(out: string[]): void {
    family(out, "tollgate_http_requests_total", "counter", "HTTP requests answered, by route and status.");
    for (const [route, stats] of this.routes) {
      for (const [status, n] of stats.byStatus) out.push(`tollgate_http_requests_total{route="${label(route)}",status="${status}"} ${n}`);
    }
    family(out, "tollgate_http_request_duration_seconds", "histogram", "Time from receiving a request to answering it, by route.");
    for (const [route, stats] of this.routes) {
      const r = label(route);
      let cumulative = 0;
      BUCKETS_S.forEach((le, i) => {
        cumulative += stats.buckets[i]!;
        out.push(`tollgate_http_request_duration_seconds_bucket{route="${r}",le="${le}"} ${cumulative}`);
      });
      out.push(`tollgate_http_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${stats.count}`);
      out.push(`tollgate_http_request_duration_seconds_sum{route="${r}"} ${stats.sumS}`);
      out.push(`tollgate_http_request_duration_seconds_count{route="${r}"} ${stats.count}`);
    }
  }
}

/** The build and the process: what runs, since when, and the CPU it has used. */
function renderProcess(out: string[], build: MetricsSources["build"]): void {
  family(out, "tollgate_build_info", "gauge", "Always 1; the labels name the version and the commit of the running binary.");
  out.push(`tollgate_build_info{version="${label(build.version)}",commit="${label(build.commit)}"} 1`);
  family(out, "tollgate_process_start_time_seconds", "gauge", "When the process started, in seconds since the Unix epoch.");
  out.push(`tollgate_process_start_time_seconds ${performance.timeOrigin / 1000}`);
  const cpu = process.cpuUsage();
  family(out, "tollgate_process_cpu_seconds_total", "counter", "CPU time the process has used, user and system.");
  out.push(`tollgate_process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`);
}

function family(out: string[], name: string, type: string, help: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

/** Escapes a label value as the text format requires. */
function label(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n");
}

/** GET /metrics for clients in `allow` (the socket's address, never X-Forwarded-For, which a client can forge). */
export const metricsRoute = (registry: MetricsRegistry, allow: readonly AddressRange[], sources: MetricsSources, allowedHosts: ReadonlySet<string>) => {
  const allowList = new AddressAllowList(allow);
  return new Elysia().get("/metrics", ({ request, server }) => {
    if (!allowList.allows(server?.requestIP(request)?.address)) {
      throw new AppError("route_not_found", { detail: "No route answers this method and path." });
    }
    // After the address: to a client outside the allow-list the route must look like none at all.
    requireAllowedHost(request, allowedHosts);
    return new Response(registry.render(sources), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
  }, { detail: { hide: true } });
};

/** A cluster node's dependencies and credit settlement; nothing on a box. */
function renderCluster(out: string[], sources: MetricsSources): void {
  const dependencies = sources.dependencies?.();
  if (dependencies) {
    family(out, "tollgate_dependency_up", "gauge", "1 while the shared server answers (probed every second and seen by requests), 0 during an outage.");
    for (const d of dependencies) out.push(`tollgate_dependency_up{dependency="${label(d.name)}"} ${d.up ? 1 : 0}`);
    family(out, "tollgate_dependency_failed_requests_total", "counter", "Requests the server's absence made fail open (let through, TOLLGATE_REDIS_UNREACHABLE=open) or closed (refused, or service_unavailable).");
    for (const d of dependencies) {
      out.push(`tollgate_dependency_failed_requests_total{dependency="${label(d.name)}",mode="open"} ${d.failedOpen}`);
      out.push(`tollgate_dependency_failed_requests_total{dependency="${label(d.name)}",mode="closed"} ${d.failedClosed}`);
    }
  }
  const settlement = sources.creditSettlement?.();
  if (settlement) {
    family(out, "tollgate_credit_spends_unsettled", "gauge", "Credit-spend statements given up on (their requests answered with an error) not settled yet; settled once PostgreSQL answers.");
    out.push(`tollgate_credit_spends_unsettled ${settlement.unsettled}`);
    family(out, "tollgate_credit_spends_settled_total", "counter", "Credit-spend statements given up on, by how they were settled: cancelled (never committed) or refunded (committed, given back).");
    out.push(`tollgate_credit_spends_settled_total{outcome="cancelled"} ${settlement.cancelled}`);
    out.push(`tollgate_credit_spends_settled_total{outcome="refunded"} ${settlement.refunded}`);
    family(out, "tollgate_credit_spends_unsettled_dropped_total", "counter", "Statements dropped unsettled past the bound on those waiting (100,000).");
    out.push(`tollgate_credit_spends_unsettled_dropped_total ${settlement.dropped}`);
  }
}
