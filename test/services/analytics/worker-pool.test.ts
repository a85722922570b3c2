/**
 * The analytics worker pool, with a stand-in worker (fake-query-worker.ts): one query at a time in
 * order, the time limit (waiting included), a bounded queue, crashes, and stop. The real worker's
 * time limit is shown end to end in test/routes/v2/analytics/timeout.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { AppError } from "../../../src/errors/app-error.ts";
import { AnalyticsWorkerPool, type WorkerPoolOptions } from "../../../src/services/analytics/index.ts";

const pools: AnalyticsWorkerPool[] = [];
afterEach(() => { for (const p of pools.splice(0)) p.stop(); });

function pool(opts: Partial<WorkerPoolOptions> = {}): AnalyticsWorkerPool {
  const p = new AnalyticsWorkerPool({
    dbPath: "", timeoutMs: 2000, maxRows: 10, maxBytes: 1000, workerUrl: new URL("./fake-query-worker.ts", import.meta.url), ...opts,
  });
  pools.push(p);
  return p;
}
const query = (p: AnalyticsWorkerPool, sql: string) => p.run({ sql, confinement: { workspaceId: "ws", keySpaceIds: null }, nowMs: 0 });
const codeOf = (promise: Promise<unknown>) => promise.then(() => "answered", (e: unknown) => (e instanceof AppError ? e.code : String(e)));

describe("AnalyticsWorkerPool", () => {
  test("starts no thread until the first query; then runs queries one at a time, in order", async () => {
    const p = pool();
    expect(p.stats().workerStarted).toBe(false);
    const order: string[] = [];
    const slow = query(p, "spin:100").then(() => order.push("slow"));
    const fast = query(p, "rows:1").then(() => order.push("fast"));
    expect(p.stats().queued).toBe(2);
    await Promise.all([slow, fast]);
    expect(order).toEqual(["slow", "fast"]);
    expect(p.stats()).toMatchObject({ workerStarted: true, running: false, queued: 0 });
  });

  test("a query past the limit is 422 and its worker is replaced; one waiting behind it counts its wait", async () => {
    const p = pool({ timeoutMs: 300 });
    const started = performance.now();
    const [runaway, waiting] = [codeOf(query(p, "spin:30000")), codeOf(query(p, "rows:1"))];
    expect(await runaway).toBe("query_execution_timeout");
    expect(await waiting).toBe("query_execution_timeout");
    expect(performance.now() - started).toBeLessThan(2000);
    expect(p.stats().stopping).toBe(1);
    expect(await query(p, "rows:1")).toEqual([{ sql: "rows:1" }]);
  });

  test("too many queries waiting: 429 query_quota_exceeded for the extra one", async () => {
    const p = pool({ maxQueued: 2 });
    await query(p, "rows:0");
    const first = query(p, "spin:50");
    expect(p.stats()).toMatchObject({ running: true, queued: 0 });
    const queued = [query(p, "rows:1"), query(p, "rows:2")];
    expect(await codeOf(query(p, "rows:3"))).toBe("query_quota_exceeded");
    await Promise.all([first, ...queued]);
  });

  test("a crashed worker fails its query with 503 and the next query gets a new one", async () => {
    const p = pool();
    expect(await codeOf(query(p, "crash"))).toBe("analytics_connection_failed");
    expect(await codeOf(query(p, "fail"))).toBe("invalid_analytics_query");
    expect(await query(p, "rows:1")).toEqual([{ sql: "rows:1" }]);
  });

  test("stop fails what is running or waiting with 503, and refuses new queries", async () => {
    const p = pool();
    const running = codeOf(query(p, "spin:30000"));
    const waiting = codeOf(query(p, "rows:1"));
    p.stop();
    expect([await running, await waiting]).toEqual(["service_unavailable", "service_unavailable"]);
    expect(await codeOf(query(p, "rows:1"))).toBe("service_unavailable");
  });
});
