/**
 * The only user of croner: runs each job on its schedule (UTC) and stops them all on shutdown.
 * A job that throws is logged and runs again at its next time.
 */
import { Cron } from "croner";
import type { Logger } from "../lib/logger.ts";

export interface ScheduledJob {
  name: string;
  /** Cron pattern, evaluated in UTC. */
  pattern: string;
  /** `scheduledMs`: the tick's time by the pattern (the same on every node), not when it fired. */
  run(scheduledMs: number): void | Promise<void>;
}

export interface Scheduler {
  stop(): void;
}

export function startScheduler(jobs: readonly ScheduledJob[], logger: Logger): Scheduler {
  // No croner `name`: croner keeps named jobs in a process-wide registry, so a second instance in
  // one process (tests, a restart in place) would collide with the first.
  const crons = jobs.map((job) => new Cron(job.pattern, { timezone: "UTC", protect: true }, async (self: Cron) => {
    try {
      // Whole seconds: croner's patterns have no finer field, and fires land a few ms after the tick.
      await job.run(Math.floor((self.currentRun()?.getTime() ?? Date.now()) / 1000) * 1000);
    } catch (e) {
      logger.error("scheduled job failed", { job: job.name, error: (e as Error).message });
    }
  }));
  return {
    stop() {
      for (const c of crons) c.stop();
    },
  };
}
