/**
 * A runaway analytics query is stopped at the time limit (TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS,
 * 1 s here, 5 s by default) with 422 `query_execution_timeout`, whatever its shape: also one whose
 * WHERE rejects every row, which SQLite never hands to the watchdog. Its query process, every
 * thread of it at a lower priority, is killed, so nothing goes on using CPU after the answer, while
 * keys.verifyKey keeps answering promptly.
 * Wall-clock times are measured here because they are the point; the bound on a verification
 * (a quarter of the limit) is far above its usual time, even on a loaded machine, and an event loop
 * blocked by the query would exceed it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { TEST_ACTOR, createApi, createKey, expectError } from "../../../support/contract.ts";
import { childPids, isGone, nonEmpty, threadNiceness, waitFor } from "../../../support/processes.ts";
import { MAX_NICENESS } from "../../../../src/lib/thread-priority.ts";
import { ANALYTICS_QUERY_PROCESS_COMMAND } from "../../../../src/cli/analytics-query-process.ts";
import { RUNAWAY_REJECTING_ALL, runQuery } from "./support.ts";
import { insertEvents } from "./store.ts";

const LIMIT_MS = 1000;
/** 2,000³ = 8·10⁹ joined rows: hours of work, whatever the machine. */
const RUNAWAY = "SELECT count() AS n FROM key_verifications_v1 AS a, key_verifications_v1 AS b, key_verifications_v1 AS c WHERE a.latency + b.latency + c.latency > 0";
/** The seeded events only: the verifications below are recorded in the same table. */
const SEEDED = "SELECT count() AS n FROM key_verifications_v1 WHERE key_space_id = 'ks_load'";
const TIMEOUT = "user/unprocessable_entity/query_execution_timeout";

let h: Harness;
let key = "";

beforeAll(async () => {
  h = await startHarness({ env: { TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS: String(LIMIT_MS) } });
  const ws = await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  await insertEvents(h, Array.from({ length: 2000 }, (_, i) => ({ time: h.clock.now() - i, workspaceId: ws.id, keySpaceId: "ks_load", keyId: `key_${i % 50}`, latencyMs: 1 })));
  key = (await createKey(h, { apiId: await createApi(h, "busy") })).key;
  // Start a query process and warm the key cache, so what follows measures only the runaway.
  expect((await runQuery(h, SEEDED)).body.data).toEqual([{ n: 2000 }]);
  expect((await h.post("/v2/keys.verifyKey", { key })).body.data.valid).toBe(true);
});
afterAll(async () => { await h.stop(); });

/** The query processes this test's tollgate runs. */
const queryProcesses = () => childPids(process.pid, ANALYTICS_QUERY_PROCESS_COMMAND);

describe("422: the time limit", () => {
  test("a runaway query is stopped at the limit while keys.verifyKey answers within a quarter of it throughout", async () => {
    const started = performance.now();
    let answeredAt = 0;
    const query = runQuery(h, RUNAWAY).finally(() => { answeredAt = performance.now(); });
    const latencies: number[] = [];
    while (answeredAt === 0) {
      const t = performance.now();
      const res = await h.post("/v2/keys.verifyKey", { key });
      latencies.push(performance.now() - t);
      expect(res.body.data.valid).toBe(true);
    }
    expectError(h, await query, 422, TIMEOUT, `The query ran longer than the limit of ${LIMIT_MS} ms.`);
    expect(answeredAt - started).toBeGreaterThanOrEqual(LIMIT_MS - 5);
    expect(answeredAt - started).toBeLessThan(LIMIT_MS + 1000);
    expect(latencies.length).toBeGreaterThan(20);
    expect(Math.max(...latencies)).toBeLessThan(LIMIT_MS / 4);
  }, 15_000);

  test("the next query runs on a fresh process and answers normally", async () => {
    expect((await runQuery(h, "SELECT count() AS n FROM key_verifications_v1 WHERE key_id = 'key_7'")).body.data).toEqual([{ n: 40 }]);
  });

  test("a query whose WHERE rejects every row is stopped at the limit too, and its process is gone: no CPU burns on", async () => {
    const started = performance.now();
    const query = runQuery(h, RUNAWAY_REJECTING_ALL);
    const [pid] = await waitFor(() => nonEmpty(queryProcesses()), 5000, "a query process runs the query");
    expect(queryProcesses()).toEqual([pid!]);
    // Every thread of it yields to every thread of this process, the background ones included.
    const niceness = threadNiceness(pid!);
    expect(niceness.length).toBeGreaterThan(1);
    expect(new Set(niceness)).toEqual(new Set([MAX_NICENESS]));
    const res = await query;
    expectError(h, res, 422, TIMEOUT, `The query ran longer than the limit of ${LIMIT_MS} ms.`);
    expect(performance.now() - started).toBeLessThan(LIMIT_MS + 500);
    // Killed before the answer was sent; reaped at most a moment later.
    await waitFor(() => isGone(pid!), 200, `query process ${pid} ends`);
    expect(queryProcesses()).toEqual([]);
    // This process (and any thread of it) is idle again: a query left running in a thread would
    // keep a core busy through the whole window.
    const cpuBefore = process.cpuUsage();
    await Bun.sleep(300);
    const cpu = process.cpuUsage(cpuBefore);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(150);
  }, 15_000);

  test("a query waiting behind a runaway of its own workspace runs once the runaway is stopped", async () => {
    const first = runQuery(h, RUNAWAY_REJECTING_ALL);
    const second = runQuery(h, SEEDED);
    expectError(h, await first, 422, TIMEOUT);
    expect((await second).body.data).toEqual([{ n: 2000 }]);
  }, 15_000);
});
