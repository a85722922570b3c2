/**
 * The x64 executable as an operator runs it: built (or reused from a fresh dist/), copied alone
 * into an empty directory and started from there. create → verify → limit over HTTP, with what the
 * executable must carry inside (migrations, the docs pages, the API docs UI, the analytics writer
 * thread, query processes and their SQL parser); then SIGTERM in the middle of a bounded loopback
 * load, and after a restart every acknowledged write is there: the keys created, the credits spent,
 * the rate-limit windows used, the verifications recorded for analytics.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { environOf, runCli, SERVE_ALLOCATOR_ENTRIES, startServe, type Served } from "../support/cli.ts";
import { BUILD_TIMEOUT_MS, installBinary, type InstalledBinary } from "../support/binary.ts";
import { childPids, isGone, nonEmpty, waitFor } from "../support/processes.ts";
import { RUNAWAY_REJECTING_ALL, seedEventsBeside } from "../routes/v2/analytics/support.ts";
import { ANALYTICS_QUERY_PROCESS_COMMAND } from "../../src/cli/analytics-query-process.ts";
import { withoutExternalLinks } from "../../src/http/openapi.ts";

let installed: InstalledBinary;
let served: Served | undefined;
let rootKey = "";

beforeAll(async () => {
  installed = await installBinary("x64");
}, BUILD_TIMEOUT_MS);

afterAll(() => {
  served?.kill();
  installed?.cleanup();
});

const dataDir = () => join(installed.dir, "data");
const QUERY_TIMEOUT_MS = 1000;
const serve = async () => (served = await startServe({
  dataDir: dataDir(), program: installed.program, env: { TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS) },
}));
const server = (): Served => {
  if (!served) throw new Error("serve is not running");
  return served;
};
const DAY_MS = 86_400_000;

let apiId = "";
let spendKey = "";
const CREDITS = 1_000_000;

/** Rows of an analytics.getVerifications query. */
async function analytics(query: string): Promise<Array<Record<string, number>>> {
  const res = await server().post("/v2/analytics.getVerifications", { query }, rootKey);
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("from an empty directory", () => {
  test("create an API and a key, verify it, and use up a rate limit over HTTP", async () => {
    await serve();
    // The executable re-executed itself in place with the allocator setting (src/cli/allocator.ts).
    expect(environOf(server().pid)).toEqual(expect.arrayContaining([...SERVE_ALLOCATOR_ENTRIES]));
    rootKey = readFileSync(join(dataDir(), "bootstrap-root-key"), "utf8").trim();
    // The CLI works beside the running service; the opt-in lets analytics be queried below.
    expect((await runCli(["workspace", "update", "default", "--analytics", "on"], { dataDir: dataDir(), program: installed.program })).code).toBe(0);
    const api = await server().post("/v2/apis.createApi", { name: "e2e-api" }, rootKey);
    expect(api.status).toBe(200);
    apiId = api.body.data.apiId;
    const key = await server().post("/v2/keys.createKey", { apiId, prefix: "e2e", credits: { remaining: CREDITS } }, rootKey);
    expect(key.status).toBe(200);
    spendKey = key.body.data.key;
    const verified = await server().post("/v2/keys.verifyKey", { key: spendKey }, rootKey);
    expect(verified.body.data).toMatchObject({ valid: true, code: "VALID", credits: CREDITS - 1 });

    const limit = { namespace: "e2e", identifier: "drained", limit: 5, duration: DAY_MS };
    for (let i = 0; i < 5; i++) expect((await server().post("/v2/ratelimits.limit", limit, rootKey)).body.data.success).toBe(true);
    expect((await server().post("/v2/ratelimits.limit", limit, rootKey)).body.data.success).toBe(false);
  });

  test("analytics runs in the executable: its event writer thread, query processes and the SQL parser's WASM", async () => {
    // Written by the writer thread within TOLLGATE_ANALYTICS_FLUSH_MS (1 s); waited for, bounded.
    const deadline = Date.now() + 10_000;
    let rows = await analytics("SELECT count() AS n FROM key_verifications_v1");
    while (rows[0]?.n !== 1 && Date.now() < deadline) {
      await Bun.sleep(50);
      rows = await analytics("SELECT count() AS n FROM key_verifications_v1");
    }
    expect(rows).toEqual([{ n: 1 }]);
    // Run by the executable itself, started with the hidden command.
    expect(childPids(server().pid, `tollgate\0${ANALYTICS_QUERY_PROCESS_COMMAND}`)).toHaveLength(1);
  });

  test("a runaway query is stopped at the limit in the executable too, and its query process is killed", async () => {
    // Not VALID, so the count of recorded verifications below is unchanged.
    seedEventsBeside(dataDir(), { count: 2000, outcome: "DISABLED" });
    const started = performance.now();
    const answer = server().post("/v2/analytics.getVerifications", { query: RUNAWAY_REJECTING_ALL }, rootKey);
    const [pid] = await waitFor(() => nonEmpty(childPids(server().pid, ANALYTICS_QUERY_PROCESS_COMMAND)), 5000, "a query process runs");
    const res = await answer;
    expect({ status: res.status, type: res.body.error?.type }).toEqual({ status: 422, type: expect.stringMatching(/query_execution_timeout$/) });
    expect(performance.now() - started).toBeLessThan(QUERY_TIMEOUT_MS + 1000);
    await waitFor(() => isGone(pid!), 1000, `query process ${pid} ends`);
  }, 15_000);

  test("serves the API docs UI with its script, the OpenAPI document and the error pages from inside", async () => {
    const page = await fetch(`${server().url}/docs/api`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('src="/docs/api/assets/scalar-api-reference.js"');
    const script = await fetch(`${server().url}/docs/api/assets/scalar-api-reference.js`);
    expect(script.status).toBe(200);
    const bundled = Bun.file(join(import.meta.dir, "../../node_modules/@scalar/api-reference/dist/browser/standalone.js"));
    expect(Bun.hash(await script.text())).toBe(Bun.hash(withoutExternalLinks(await bundled.text())));
    const spec = (await (await fetch(`${server().url}/docs/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths)).toContain("/v2/keys.verifyKey");
    const errors = await fetch(`${server().url}/docs/api-reference/errors-v2/user/not_found/route_not_found`);
    expect({ status: errors.status, type: errors.headers.get("content-type") }).toEqual({ status: 200, type: "text/html; charset=utf-8" });
  });
});

/** What the load got acknowledged: 200 answers whose effect must survive the stop. */
interface Acknowledged {
  spends: number;
  keyIds: string[];
  limits: number;
  total: number;
}

const WORKERS = 8;
const MAX_REQUESTS = 4000;
const SIGTERM_AFTER = 400;
const LOAD_LIMIT = { namespace: "e2e", identifier: "load", limit: 1_000_000, duration: DAY_MS };

/** One load worker: verify (spending 1 credit), create a key, take from a limit, round robin, until the server goes away. */
async function worker(url: string, offset: number, acked: Acknowledged, reached: () => void): Promise<void> {
  const headers = { "content-type": "application/json", authorization: `Bearer ${rootKey}` };
  for (let i = offset; acked.total < MAX_REQUESTS; i++) {
    const op = i % 3;
    const [path, body] = op === 0 ? ["/v2/keys.verifyKey", { key: spendKey }]
      : op === 1 ? ["/v2/keys.createKey", { apiId, prefix: "load" }]
      : ["/v2/ratelimits.limit", LOAD_LIMIT];
    let data: any;
    try {
      const res = await fetch(url + path, { method: "POST", headers, body: JSON.stringify(body) });
      if (res.status !== 200) return;
      data = ((await res.json()) as { data: unknown }).data;
    } catch {
      return; // refused or cut off: the server is stopping, and this request was not acknowledged
    }
    if (op === 0 && data.code === "VALID") acked.spends++;
    if (op === 1) acked.keyIds.push(data.keyId);
    if (op === 2 && data.success === true) acked.limits++;
    if (++acked.total === SIGTERM_AFTER) reached();
  }
}

describe("SIGTERM in the middle of load", () => {
  const acked: Acknowledged = { spends: 0, keyIds: [], limits: 0, total: 0 };
  let stopMs = 0;

  test("stops accepting, exits 0 within 5 s, with the load still running", async () => {
    const running = server();
    let reached!: () => void;
    const midLoad = new Promise<void>((resolve) => (reached = resolve));
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(running.url, w, acked, reached));
    await midLoad;
    const started = performance.now();
    expect(await running.stop()).toBe(0);
    stopMs = performance.now() - started;
    served = undefined;
    await Promise.all(workers);
    expect(stopMs).toBeLessThan(5000);
    expect(acked.total).toBeGreaterThanOrEqual(SIGTERM_AFTER);
    expect(acked.total).toBeLessThan(MAX_REQUESTS);
    expect(running.stderr()).toContain('"msg":"stopped"');
  });

  test("after a restart every acknowledged key exists", async () => {
    await serve();
    expect(acked.keyIds.length).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const keyId of acked.keyIds) {
      if ((await server().post("/v2/keys.getKey", { keyId }, rootKey)).status !== 200) missing.push(keyId);
    }
    expect(missing).toEqual([]);
  });

  test("every acknowledged credit spend is committed", async () => {
    const check = await server().post("/v2/keys.verifyKey", { key: spendKey, credits: { cost: 0 } }, rootKey);
    const acknowledgedRemaining = CREDITS - 1 - acked.spends;
    // At most the requests in flight at the stop were spent without their answer arriving.
    expect(check.body.data.credits).toBeLessThanOrEqual(acknowledgedRemaining);
    expect(check.body.data.credits).toBeGreaterThanOrEqual(acknowledgedRemaining - WORKERS);
  });

  test("every acknowledged verification was recorded for analytics before the stop", async () => {
    const [row] = await analytics("SELECT countIf(outcome = 'VALID') AS valid FROM key_verifications_v1");
    // The first verification, every acknowledged one of the load, and at most those in flight.
    expect(row!.valid).toBeGreaterThanOrEqual(1 + acked.spends);
    expect(row!.valid).toBeLessThanOrEqual(1 + acked.spends + WORKERS);
  });

  test("rate-limit windows were flushed on stop: the used-up one stays used up, the loaded one kept its count", async () => {
    const drained = await server().post("/v2/ratelimits.limit", { namespace: "e2e", identifier: "drained", limit: 5, duration: DAY_MS }, rootKey);
    expect(drained.body.data.success).toBe(false);
    const load = await server().post("/v2/ratelimits.limit", { ...LOAD_LIMIT, cost: 0 }, rootKey);
    expect(load.body.data.remaining).toBeLessThanOrEqual(LOAD_LIMIT.limit - acked.limits);
    expect(await server().stop()).toBe(0);
    served = undefined;
  });
});
