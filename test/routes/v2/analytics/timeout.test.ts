/**
 * A runaway analytics query is stopped at the time limit (TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS,
 * 1 s here, 5 s by default) with 422 `query_execution_timeout`, while keys.verifyKey keeps
 * answering promptly: the query runs on its own thread, so the event loop never waits for it.
 * Wall-clock times are measured here because they are the point; the 100 ms bound is far above a
 * verification's usual time and only a blocked event loop would exceed it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { TEST_ACTOR, createApi, createKey, expectError } from "../../../support/contract.ts";
import { insertEvent, runQuery } from "./support.ts";

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
  const ws = h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  const sqlite = h.running.analytics.sqlite;
  sqlite.transaction(() => {
    for (let i = 0; i < 2000; i++) insertEvent(sqlite, { time: h.clock.now() - i, workspaceId: ws.id, keySpaceId: "ks_load", keyId: `key_${i % 50}`, latencyMs: 1 });
  })();
  key = (await createKey(h, { apiId: await createApi(h, "busy") })).key;
  // Start the query worker and warm the key cache, so what follows measures only the runaway.
  expect((await runQuery(h, SEEDED)).body.data).toEqual([{ n: 2000 }]);
  expect((await h.post("/v2/keys.verifyKey", { key })).body.data.valid).toBe(true);
});
afterAll(async () => { await h.stop(); });

describe("422: the time limit", () => {
  test("a runaway query is stopped at the limit while keys.verifyKey answers within 100 ms throughout", async () => {
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
    expect(Math.max(...latencies)).toBeLessThan(100);
  });

  test("the next query runs on a fresh worker and answers normally", async () => {
    expect((await runQuery(h, "SELECT count() AS n FROM key_verifications_v1 WHERE key_id = 'key_7'")).body.data).toEqual([{ n: 40 }]);
  });

  test("time spent waiting behind a runaway query counts: both are stopped at their own limit", async () => {
    const first = runQuery(h, RUNAWAY);
    const second = runQuery(h, SEEDED);
    expectError(h, await first, 422, TIMEOUT);
    expectError(h, await second, 422, TIMEOUT);
    expect((await runQuery(h, SEEDED)).body.data).toEqual([{ n: 2000 }]);
  });
});
