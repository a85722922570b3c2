/**
 * GET /metrics: the Prometheus text the registry renders (requests by route and status, a
 * cumulative latency histogram, verifications by code, rate-limit decisions, the key cache and the
 * database size), and the allow-list: loopback by default, 404 for everyone else.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MetricsRegistry, UNMATCHED_ROUTE } from "../../src/http/metrics.ts";
import { Ok } from "../../src/http/envelope.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { VerificationCountsByApi } from "../../src/services/verification/index.ts";
import pkg from "../../package.json";

const sources = {
  keyCache: () => ({ hits: 3, misses: 1, size: 2, sizeBytes: 2048 }), databaseSizeBytes: () => 4096, analyticsDatabaseSizeBytes: () => 8192, requestsInFlight: () => 2, operationsInFlight: () => ({ authenticated: 3, unauthenticated: 1 }),
  ratelimitWindows: () => ({ windows: 5, bytes: 1200, evicted: 2, unkept: 1 }),
  ratelimitNamespaces: () => ({ entries: 3, bytes: 2100 }),
  verificationsByApi: (): Array<[string, string, number]> => [["api_1", "VALID", 4], ["other", "EXPIRED", 1]],
  build: { version: "1.2.3", commit: "abc123" },
};

/** The value of the sample line `name{labels}`, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("MetricsRegistry", () => {
  test("counts requests by route and status, with a cumulative histogram per route", () => {
    const m = new MetricsRegistry();
    m.observeRequest("/v2/keys.verifyKey", 200, 0.1);
    m.observeRequest("/v2/keys.verifyKey", 200, 3);
    m.observeRequest("/v2/keys.verifyKey", 400, 7000);
    const text = m.render(sources);
    expect(sample(text, `tollgate_http_requests_total{route="/v2/keys.verifyKey",status="200"}`)).toBe(2);
    expect(sample(text, `tollgate_http_requests_total{route="/v2/keys.verifyKey",status="400"}`)).toBe(1);
    const bucket = (le: string) => sample(text, `tollgate_http_request_duration_seconds_bucket{route="/v2/keys.verifyKey",le="${le}"}`);
    expect(bucket("0.00025")).toBe(1);
    expect(bucket("0.005")).toBe(2);
    expect(bucket("5")).toBe(2);
    expect(bucket("+Inf")).toBe(3);
    expect(sample(text, `tollgate_http_request_duration_seconds_count{route="/v2/keys.verifyKey"}`)).toBe(3);
    expect(sample(text, `tollgate_http_request_duration_seconds_sum{route="/v2/keys.verifyKey"}`)).toBeCloseTo(7.0031, 6);
  });

  test("counts verification codes and rate-limit decisions from the hot routes' results only", () => {
    const m = new MetricsRegistry();
    m.observeResult("/v2/keys.verifyKey", new Ok({ valid: true, code: "VALID" }));
    m.observeResult("/v2/keys.verifyKey", new Ok({ valid: false, code: "RATE_LIMITED" }));
    m.observeResult("/v2/keys.verifyKey", new Ok({ valid: true, code: "VALID" }));
    m.observeResult("/v2/ratelimit.limit", new Ok({ success: true }));
    m.observeResult("/v2/ratelimits.limit", new Ok({ success: false }));
    m.observeResult("/v2/ratelimit.multiLimit", new Ok({ passed: false, limits: [] }));
    m.observeResult("/v2/apis.getApi", new Ok({ code: "VALID", success: true }));
    const text = m.render(sources);
    expect(sample(text, `tollgate_verifications_total{code="VALID"}`)).toBe(2);
    expect(sample(text, `tollgate_verifications_total{code="RATE_LIMITED"}`)).toBe(1);
    expect(sample(text, `tollgate_ratelimit_decisions_total{decision="passed"}`)).toBe(1);
    expect(sample(text, `tollgate_ratelimit_decisions_total{decision="denied"}`)).toBe(2);
  });

  test("reads the gauges when rendered; every family has HELP and TYPE", () => {
    const text = new MetricsRegistry().render(sources);
    expect(sample(text, "tollgate_key_cache_hit_ratio")).toBe(0.75);
    expect(sample(text, "tollgate_key_cache_hits_total")).toBe(3);
    expect(sample(text, "tollgate_key_cache_entries")).toBe(2);
    expect(sample(text, "tollgate_key_cache_bytes")).toBe(2048);
    expect(sample(text, "tollgate_database_size_bytes")).toBe(4096);
    expect(sample(text, "tollgate_analytics_database_size_bytes")).toBe(8192);
    expect(sample(text, "tollgate_http_requests_in_flight")).toBe(2);
    expect(sample(text, `tollgate_http_operations_in_flight{class="authenticated"}`)).toBe(3);
    expect(sample(text, `tollgate_http_operations_in_flight{class="unauthenticated"}`)).toBe(1);
    expect(sample(text, "tollgate_ratelimit_windows")).toBe(5);
    expect(sample(text, "tollgate_ratelimit_window_bytes")).toBe(1200);
    expect(sample(text, "tollgate_ratelimit_windows_evicted_total")).toBe(2);
    expect(sample(text, "tollgate_ratelimit_windows_unkept_total")).toBe(1);
    expect(sample(text, "tollgate_ratelimit_namespace_cache_entries")).toBe(3);
    expect(sample(text, "tollgate_ratelimit_namespace_cache_bytes")).toBe(2100);
    expect(sample(text, "tollgate_process_resident_memory_bytes")).toBeGreaterThan(0);
    const families = [...text.matchAll(/^# TYPE (\S+) (counter|gauge|histogram)$/gm)].map((m) => m[1]);
    expect(families.length).toBe(new Set(families).size);
    for (const f of families) expect(text).toContain(`# HELP ${f} `);
  });

  test("names the build, the process start time and its CPU seconds", () => {
    const text = new MetricsRegistry().render(sources);
    expect(sample(text, `tollgate_build_info{version="1.2.3",commit="abc123"}`)).toBe(1);
    const startS = sample(text, "tollgate_process_start_time_seconds")!;
    expect(startS).toBeLessThanOrEqual(Date.now() / 1000);
    expect(startS).toBeGreaterThan(Date.now() / 1000 - 3600);
    expect(sample(text, "tollgate_process_cpu_seconds_total")).toBeGreaterThan(0);
  });

  test("renders verifications by API and code from its source", () => {
    const text = new MetricsRegistry().render(sources);
    expect(sample(text, `tollgate_verifications_by_api_total{api_id="api_1",code="VALID"}`)).toBe(4);
    expect(sample(text, `tollgate_verifications_by_api_total{api_id="other",code="EXPIRED"}`)).toBe(1);
  });

  test("escapes label values", () => {
    const m = new MetricsRegistry();
    m.observeRequest('a"b\\c', 200, 1);
    expect(m.render(sources)).toContain('route="a\\"b\\\\c"');
  });
});

describe("VerificationCountsByApi", () => {
  test("counts by API and code, and counts APIs beyond the cap as `other`", () => {
    const counts = new VerificationCountsByApi(2);
    for (const api of ["api_a", "api_b", "api_a", "api_c", "api_d", "api_b"]) counts.count(api, "VALID");
    counts.count("api_c", "EXPIRED");
    expect([...counts.series()]).toEqual([
      ["api_a", "VALID", 2], ["api_b", "VALID", 2], ["other", "VALID", 2], ["other", "EXPIRED", 1],
    ]);
  });

  test("a cap of 0 counts every API as `other`", () => {
    const counts = new VerificationCountsByApi(0);
    counts.count("api_a", "VALID");
    expect([...counts.series()]).toEqual([["other", "VALID", 1]]);
  });
});

describe("GET /metrics on a running service (loopback allowed by default)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.stop());

  test("reflects the requests, verifications, rate-limit decisions, cache and database it served", async () => {
    const api = await h.post("/v2/apis.createApi", { name: "metrics-api" });
    const key = await h.post("/v2/keys.createKey", { apiId: api.body.data.apiId });
    await h.post("/v2/keys.verifyKey", { key: key.body.data.key });
    await h.post("/v2/keys.verifyKey", { key: key.body.data.key });
    await h.post("/v2/keys.verifyKey", { key: "unknown_key_1234" });
    const limit = { namespace: "metrics", identifier: "u", limit: 1, duration: 60_000 };
    await h.post("/v2/ratelimits.limit", limit);
    await h.post("/v2/ratelimits.limit", limit);
    await fetch(`${h.url}/no/such/route/${crypto.randomUUID()}`);

    const res = await fetch(`${h.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const text = await res.text();
    expect(sample(text, `tollgate_http_requests_total{route="/v2/keys.verifyKey",status="200"}`)).toBe(3);
    expect(sample(text, `tollgate_http_requests_total{route="${UNMATCHED_ROUTE}",status="404"}`)).toBe(1);
    expect(text).not.toContain("/no/such/route");
    expect(sample(text, `tollgate_verifications_total{code="VALID"}`)).toBe(2);
    expect(sample(text, `tollgate_verifications_total{code="NOT_FOUND"}`)).toBe(1);
    expect(sample(text, `tollgate_ratelimit_decisions_total{decision="passed"}`)).toBe(1);
    expect(sample(text, `tollgate_ratelimit_decisions_total{decision="denied"}`)).toBe(1);
    expect(sample(text, "tollgate_key_cache_hits_total")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "tollgate_database_size_bytes")).toBeGreaterThan(0);
    expect(sample(text, "tollgate_analytics_database_size_bytes")).toBeGreaterThan(0);
    expect(sample(text, "tollgate_http_requests_in_flight")).toBe(0);
    // The unknown key belongs to no API: it is in tollgate_verifications_total alone.
    expect(sample(text, `tollgate_verifications_by_api_total{api_id="${api.body.data.apiId}",code="VALID"}`)).toBe(2);
    expect(text.match(/^tollgate_verifications_by_api_total\{/gm)?.length).toBe(1);
    expect(sample(text, `tollgate_build_info{version="${pkg.version}",commit="unknown"}`)).toBe(1);
  });

  test("is left out of the OpenAPI document", async () => {
    const spec = (await (await fetch(`${h.url}/docs/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths)).not.toContain("/metrics");
  });
});

describe("GET /metrics from an address outside TOLLGATE_METRICS_ALLOW", () => {
  test("answers 404 like an unknown route", async () => {
    const h = await startHarness({ env: { TOLLGATE_METRICS_ALLOW: "10.0.0.0/8,fd00::/8" } });
    try {
      const res = await fetch(`${h.url}/metrics`);
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: { type: string } };
      expect(body.error.type).toEndWith("/route_not_found");
      // X-Forwarded-For is the client's word, not its address.
      expect((await fetch(`${h.url}/metrics`, { headers: { "x-forwarded-for": "10.1.2.3" } })).status).toBe(404);
    } finally {
      await h.stop();
    }
  });
});

describe("GET /metrics on a dual-stack listener (TOLLGATE_HOST=::)", () => {
  test("loopback over IPv4 (seen as ::ffff:127.0.0.1) and over IPv6 is allowed by default", async () => {
    const h = await startHarness({ env: { TOLLGATE_HOST: "::" } });
    try {
      const port = new URL(h.url).port;
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
      expect((await fetch(`http://[::1]:${port}/metrics`)).status).toBe(200);
    } finally {
      await h.stop();
    }
  });

  test("a list of IPv4 ranges only still matches IPv4 clients of the dual-stack listener", async () => {
    const h = await startHarness({ env: { TOLLGATE_HOST: "::", TOLLGATE_METRICS_ALLOW: "127.0.0.1" } });
    try {
      const port = new URL(h.url).port;
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
      expect((await fetch(`http://[::1]:${port}/metrics`)).status).toBe(404);
    } finally {
      await h.stop();
    }
  });
});
