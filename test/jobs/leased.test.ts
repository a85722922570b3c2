/**
 * A scheduled job on three nodes of a cluster (jobs/leased.ts over storage/pg/job-lease.ts, real
 * PostgreSQL): every node fires each tick, the job runs once per tick; a run that fails is not
 * recorded finished.
 */
import { describe, expect, test } from "bun:test";
import { drizzle } from "drizzle-orm/bun-sql";
import { leasedJob } from "../../src/jobs/leased.ts";
import type { ScheduledJob } from "../../src/jobs/scheduler.ts";
import { JobLeases, leaseClaims } from "../../src/storage/pg/job-lease.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { postgresForFile } from "../cluster/pg-database.ts";

const TICK_MS = Math.floor(Date.now() / 60_000) * 60_000;
const quiet = createLogger("error", () => undefined);

describe.skipIf(skipWithout(missing.postgres(), "leased scheduled jobs"))("a job on three nodes", () => {
  const pg = postgresForFile();

  async function threeNodes(job: ScheduledJob): Promise<{ nodes: ScheduledJob[]; url: string }> {
    const url = await pg.freshDatabase();
    const nodes = Array.from({ length: 3 }, () => leasedJob(job, leaseClaims(new JobLeases(drizzle({ client: pg.client(url) })), 60_000), quiet));
    return { nodes, url };
  }

  test("runs once per tick, whichever node fires first, with the tick's time", async () => {
    const ran: number[] = [];
    const { nodes } = await threeNodes({ name: "refill", pattern: "* * * * *", run: (scheduledMs) => void ran.push(scheduledMs) });
    for (let minute = 0; minute < 5; minute++) {
      await Promise.all(nodes.map((node) => node.run(TICK_MS + minute * 60_000)));
    }
    expect(ran).toEqual([0, 1, 2, 3, 4].map((minute) => TICK_MS + minute * 60_000));
  });

  test("a failed run is not recorded finished: its error reaches the scheduler, and the tick stays leased", async () => {
    let attempts = 0;
    const { nodes, url } = await threeNodes({ name: "prune", pattern: "* * * * *", run: () => {
      attempts++;
      throw new Error("disk full");
    } });
    const outcomes = await Promise.allSettled(nodes.map((node) => node.run(TICK_MS)));
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(1);
    expect(attempts).toBe(1);
    const runs = await pg.client(url)`SELECT job, finished_at_ms FROM job_runs`;
    expect(runs).toEqual([{ job: "prune", finished_at_ms: null }]);
  });
});
