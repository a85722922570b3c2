/**
 * One workspace's runaway analytics queries never make another's fail: each workspace runs at most
 * TOLLGATE_ANALYTICS_QUERIES_PER_WORKSPACE queries (1) with TOLLGATE_ANALYTICS_QUEUE_PER_WORKSPACE
 * waiting (2 here), 429 with Retry-After beyond; a free query process goes to a workspace running nothing
 * first. One process here, the hardest case: workspace `default` keeps it busy with runaways, and
 * workspace `other`'s ordinary query waits for one deadline and a fresh process, no more.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { TEST_ACTOR, expectError } from "../../../support/contract.ts";
import { ALL_GRANTS } from "../../../../src/services/auth/index.ts";
import { waitFor } from "../../../support/processes.ts";
import { RUNAWAY_REJECTING_ALL, runQuery } from "./support.ts";
import { insertEvents } from "./store.ts";

const LIMIT_MS = 1000;
/** A process start from sources on a busy machine, on top of the deadline. */
const START_MARGIN_MS = 4000;
const COUNT = "SELECT count() AS n FROM key_verifications_v1";
const TIMEOUT = "user/unprocessable_entity/query_execution_timeout";
const QUOTA = "user/too_many_requests/query_quota_exceeded";

let h: Harness;
let otherKey = "";

beforeAll(async () => {
  h = await startHarness({ env: { TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS: String(LIMIT_MS), TOLLGATE_ANALYTICS_QUERY_PROCESSES: "1", TOLLGATE_ANALYTICS_QUEUE_PER_WORKSPACE: "2" } });
  const ws = h.running.services.workspaces;
  const own = await ws.setAnalytics("default", true, TEST_ACTOR);
  const other = await ws.create({ name: "other", analyticsEnabled: true }, TEST_ACTOR);
  otherKey = await h.rootKeyWith([...ALL_GRANTS], "other");
  await insertEvents(h, [
    ...Array.from({ length: 2000 }, (_, i) => ({ time: h.clock.now() - i, workspaceId: own.id, keySpaceId: "ks_a", latencyMs: 1 })),
    ...Array.from({ length: 7 }, (_, i) => ({ time: h.clock.now() - i, workspaceId: other.id, keySpaceId: "ks_b", latencyMs: 1 })),
  ]);
  // The one query process is started and idle.
  expect((await runQuery(h, COUNT, otherKey)).body.data).toEqual([{ n: 7 }]);
});
afterAll(async () => { await h.stop(); });

describe("each workspace's share of the query processes", () => {
  test("200: another workspace's query answers within one deadline while runaways hold the process; 429 with Retry-After past the runaways' queue", async () => {
    const runaways = [runQuery(h, RUNAWAY_REJECTING_ALL), runQuery(h, RUNAWAY_REJECTING_ALL), runQuery(h, RUNAWAY_REJECTING_ALL)];
    // Requests sent at once reach the queue in no set order (a cluster node first reads the
    // workspace's opt-in from PostgreSQL): the fourth is sent once the three are in.
    const queue = () => h.running.services.analytics.queueStats();
    await waitFor(() => queue().running + queue().waiting === 3, 5000, "the three runaways are running or waiting");
    const refused = await runQuery(h, RUNAWAY_REJECTING_ALL);
    expectError(h, refused, 429, QUOTA, "The workspace already has 3 analytics queries running or waiting (at most 1 run at once); try again when one has answered.");
    expect(refused.headers.get("retry-after")).toBe("1");

    const started = performance.now();
    const theirs = await runQuery(h, COUNT, otherKey);
    expect({ status: theirs.status, data: theirs.body.data }).toEqual({ status: 200, data: [{ n: 7 }] });
    expect(performance.now() - started).toBeLessThan(LIMIT_MS + START_MARGIN_MS);

    const answers = await Promise.all(runaways);
    expectError(h, answers[0]!, 422, TIMEOUT);
    // The others ran after the other workspace's query, or waited too long for the process.
    for (const res of answers.slice(1)) expect([422, 429]).toContain(res.status);
  }, 30_000);
});
