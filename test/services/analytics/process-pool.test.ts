/**
 * The analytics process pool, with a stand-in query process (fake-query-process.ts): processes
 * started on demand, the deadline from when a process takes a query and the process killed at it,
 * each workspace's share and the fair order between workspaces, the bounded wait, crashes, and
 * stop. The real query process is shown end to end in test/routes/v2/analytics/timeout.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { AppError } from "../../../src/errors/app-error.ts";
import { AnalyticsProcessPool, type ProcessPoolOptions } from "../../../src/services/analytics/index.ts";
import { isGone, waitFor } from "../../support/processes.ts";

const FAKE = [process.execPath, new URL("./fake-query-process.ts", import.meta.url).pathname];

const pools: AnalyticsProcessPool[] = [];
afterEach(() => { for (const p of pools.splice(0)) p.stop(); });

function pool(opts: Partial<Omit<ProcessPoolOptions, "postgresUrl">> & { dbPath?: string } = {}): AnalyticsProcessPool {
  const p = new AnalyticsProcessPool({
    dbPath: "", command: FAKE, timeoutMs: 2000, maxRows: 10, maxBytes: 1000, processes: 2, perWorkspace: { running: 1, waiting: 2 }, ...opts,
  });
  pools.push(p);
  return p;
}
const query = (p: AnalyticsProcessPool, sql: string, workspaceId = "ws_a") => p.run({ sql, confinement: { workspaceId, keySpaceIds: null }, nowMs: 0 });
const outcome = (promise: Promise<unknown>) => promise.then(() => "answered", (e: unknown) => (e instanceof AppError ? e.code : String(e)));
const pidOf = async (promise: Promise<Array<Record<string, unknown>>>) => (await promise)[0]!.pid as number;

describe("processes", () => {
  test("none until the first query; then a workspace's queries run one at a time, in order", async () => {
    const p = pool();
    expect(p.stats().pids).toEqual([]);
    const order: string[] = [];
    const slow = query(p, "spin:100").then(() => order.push("slow"));
    const fast = query(p, "rows:1").then(() => order.push("fast"));
    // The first has a process started for it; the second waits for its workspace's turn.
    expect(p.stats()).toMatchObject({ running: 1, waiting: 1 });
    await Promise.all([slow, fast]);
    expect(order).toEqual(["slow", "fast"]);
    expect(p.stats()).toMatchObject({ ready: 1, running: 0, waiting: 0 });
  });

  test("different workspaces run side by side, on as many processes as allowed", async () => {
    const p = pool({ processes: 2 });
    const warm = await Promise.all([pidOf(query(p, "rows:1", "ws_a")), pidOf(query(p, "rows:1", "ws_b"))]);
    const started = performance.now();
    const pids = await Promise.all([pidOf(query(p, "spin:400", "ws_a")), pidOf(query(p, "spin:400", "ws_b"))]);
    expect(new Set(pids)).toEqual(new Set(warm));
    expect(new Set(pids).size).toBe(2);
    // One after the other would take 800 ms and more.
    expect(performance.now() - started).toBeLessThan(800);
  });

  test("a crashed process fails its query alone with 503; the next query gets a new process", async () => {
    const p = pool();
    const before = await pidOf(query(p, "rows:1"));
    expect(await outcome(query(p, "crash"))).toBe("analytics_connection_failed");
    expect(await pidOf(query(p, "rows:1"))).not.toBe(before);
  });

  test("a query's 400 leaves the process in use; a broken parser's 400 replaces it", async () => {
    const p = pool();
    const first = await pidOf(query(p, "rows:1"));
    expect(await outcome(query(p, "fail"))).toBe("invalid_analytics_query");
    expect(await pidOf(query(p, "rows:1"))).toBe(first);
    expect(await outcome(query(p, "broken"))).toBe("invalid_analytics_query");
    expect(await pidOf(query(p, "rows:1"))).not.toBe(first);
    await waitFor(() => isGone(first), 2000, "the replaced process ends");
  });

  test("a process that cannot start fails what waits with 503", async () => {
    const p = pool({ dbPath: "fail" });
    expect(await Promise.all([outcome(query(p, "rows:1", "ws_a")), outcome(query(p, "rows:1", "ws_b"))]))
      .toEqual(["analytics_connection_failed", "analytics_connection_failed"]);
  });

  test("stop kills every process, fails what runs or waits with service_unavailable, and refuses new queries", async () => {
    const p = pool();
    await query(p, "rows:1");
    const running = outcome(query(p, "spin:0"));
    const waiting = outcome(query(p, "rows:1"));
    const [pid] = p.stats().pids;
    p.stop();
    expect([await running, await waiting]).toEqual(["service_unavailable", "service_unavailable"]);
    expect(await outcome(query(p, "rows:1"))).toBe("service_unavailable");
    await waitFor(() => isGone(pid!), 2000, "the process ends");
  });
});

describe("the deadline", () => {
  test("422 at the deadline, and the process is killed at once; the next query gets a fresh one", async () => {
    const p = pool({ timeoutMs: 300 });
    const pid = await pidOf(query(p, "rows:1"));
    const started = performance.now();
    expect(await outcome(query(p, "spin:0"))).toBe("query_execution_timeout");
    expect(performance.now() - started).toBeLessThan(300 + 200);
    await waitFor(() => isGone(pid), 1000, "the runaway process ends");
    expect(await pidOf(query(p, "rows:1"))).not.toBe(pid);
  });

  test("starts when a process takes the query: one waiting behind its workspace's runaway still runs", async () => {
    const p = pool({ timeoutMs: 300 });
    const [runaway, next] = [outcome(query(p, "spin:0")), outcome(query(p, "rows:1"))];
    expect(await runaway).toBe("query_execution_timeout");
    expect(await next).toBe("answered");
  });
});

describe("each workspace's share", () => {
  test("beyond running + waiting: 429 query_quota_exceeded at once, with a retry time of one deadline", async () => {
    const p = pool({ timeoutMs: 1500, perWorkspace: { running: 1, waiting: 2 } });
    const mine = [query(p, "spin:200"), query(p, "rows:1"), query(p, "rows:2")];
    const refused = await query(p, "rows:3").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "query_quota_exceeded", retryAfterS: 2 });
    // Another workspace is not affected.
    expect(await outcome(query(p, "rows:1", "ws_b"))).toBe("answered");
    await Promise.all(mine);
  });

  test("a free process goes to a workspace running nothing before a busy workspace's next query", async () => {
    const p = pool({ processes: 1, timeoutMs: 400 });
    await query(p, "rows:1", "ws_warm");
    const order: string[] = [];
    const track = (name: string, promise: Promise<unknown>) => outcome(promise).then((o) => { order.push(name); return o; });
    const a1 = track("a1", query(p, "spin:0", "ws_a"));
    const a2 = track("a2", query(p, "spin:0", "ws_a"));
    const b = track("b", query(p, "rows:1", "ws_b"));
    const started = performance.now();
    expect(await b).toBe("answered");
    // b waited for a1's deadline and a fresh process, not for a2 as well.
    expect(performance.now() - started).toBeLessThan(400 + 1000);
    expect([await a1, await a2]).toEqual(["query_execution_timeout", "query_execution_timeout"]);
    expect(order).toEqual(["a1", "b", "a2"]);
  });

  test("a query that cannot start within two deadlines gets 429, with a retry time", async () => {
    const p = pool({ processes: 1, timeoutMs: 300 });
    await query(p, "rows:1", "ws_warm");
    const a = outcome(query(p, "spin:0", "ws_a"));
    const b = outcome(query(p, "spin:0", "ws_b"));
    const started = performance.now();
    const c = await query(p, "rows:1", "ws_c").catch((e: unknown) => e);
    expect(c).toMatchObject({ code: "query_quota_exceeded", retryAfterS: 1, detail: "The analytics query waited 600 ms for a free query process; try again later." });
    expect(performance.now() - started).toBeGreaterThanOrEqual(590);
    expect([await a, await b]).toEqual(["query_execution_timeout", "query_execution_timeout"]);
  });
});
