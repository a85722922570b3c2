/**
 * Analytics query processes of the real `tollgate serve` (a child process): when serve is killed
 * with SIGKILL (no handler of its own runs), the query process running a runaway query ends with
 * it, long before the query's deadline, instead of running on as an orphan; it holds none of serve's
 * environment. The hidden command refuses to run when started by hand.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { environOf, runCli, startServe, tempDataDir } from "../support/cli.ts";
import { perTest } from "../support/cli-slots.ts";
import { childPids, cpuMsOf, isGone, nonEmpty, openFiles, waitFor } from "../support/processes.ts";
import { RUNAWAY_REJECTING_ALL, seedEventsBeside } from "../routes/v2/analytics/support.ts";
import { ANALYTICS_QUERY_PROCESS_COMMAND } from "../../src/cli/analytics-query-process.ts";

const t = perTest();

describe("analytics query processes", () => {
  test("a query process running a runaway query ends when serve is killed", async () => {
    t.data = tempDataDir();
    // A deadline far off: only serve's death can end the query here.
    t.served = await startServe({ dataDir: t.data.dir, env: { TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS: "600000" } });
    const rootKey = readFileSync(join(t.data.dir, "bootstrap-root-key"), "utf8").trim();
    expect((await runCli(["workspace", "update", "default", "--analytics", "on"], { dataDir: t.data.dir })).code).toBe(0);
    seedEventsBeside(t.data.dir, { count: 2000 });
    const server = t.served;
    server.post("/v2/analytics.getVerifications", { query: RUNAWAY_REJECTING_ALL }, rootKey).catch(() => {});
    const [pid] = await waitFor(() => nonEmpty(childPids(server.pid, ANALYTICS_QUERY_PROCESS_COMMAND)), 15_000, "serve starts a query process");
    // Started (it opens analytics.db last) and running the query: using CPU since. Slow on a busy
    // machine: the process runs at a lower priority.
    await waitFor(() => openFiles(pid!).includes(join(t.data!.dir, "analytics.db")), 40_000, "the query process opens analytics.db");
    const readyCpuMs = cpuMsOf(pid!) ?? 0;
    await waitFor(() => (cpuMsOf(pid!) ?? 0) >= readyCpuMs + 50, 40_000, "the query process runs the query");

    // Nothing of serve's environment, TOLLGATE_MASTER_KEY and the like included, reaches it: only
    // what Bun adds for the IPC channel.
    expect(environOf(pid!).filter((entry) => !entry.startsWith("NODE_CHANNEL_"))).toEqual([]);

    server.kill();
    await waitFor(() => isGone(pid!), 3000, `query process ${pid} ends after serve was killed`);
  }, 120_000);

  test("the hidden command started by hand, without serve's channel: exit 2 with a message", async () => {
    t.data = tempDataDir();
    const result = await runCli([ANALYTICS_QUERY_PROCESS_COMMAND], { dataDir: t.data.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("is internal: `tollgate serve` starts it.");
  });
});
