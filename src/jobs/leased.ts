/**
 * Scheduled jobs run once per cluster: every node's scheduler fires each tick, and only the node
 * that claims the tick's run (storage/pg/job-lease.ts, through `RunClaims`) runs it, renewing its
 * lease while the job runs. The other nodes fire the same tick at about the same moment and find
 * it claimed; if its holder dies mid-run, the tick is not run again: the next tick does the due
 * work, since every job does what is due at its time (refills, prunes).
 */
import type { Logger } from "../lib/logger.ts";
import type { ScheduledJob } from "./scheduler.ts";

export interface ClaimedRun {
  /** Extends the lease; false when another node took the run over. */
  renew(): Promise<boolean>;
  finish(): Promise<unknown>;
}

export interface RunClaims {
  /** The run of `job` for the tick `scheduledMs`, or undefined when another node holds or finished it. */
  claim(job: string, scheduledMs: number): Promise<ClaimedRun | undefined>;
  /** How often a held lease is renewed while its job runs. */
  renewEveryMs: number;
}

/** `job`, run only by the node that claims each tick. */
export function leasedJob(job: ScheduledJob, claims: RunClaims, logger: Logger): ScheduledJob {
  return {
    name: job.name,
    pattern: job.pattern,
    async run(scheduledMs) {
      const run = await claims.claim(job.name, scheduledMs);
      if (run === undefined) return;
      const renewal = setInterval(() => {
        run.renew().then((held) => {
          if (!held) logger.warn("a scheduled job's run was taken over by another node", { job: job.name });
        }, (error: unknown) => logger.warn("could not renew a scheduled job's lease", { job: job.name, error: (error as Error).message }));
      }, claims.renewEveryMs);
      try {
        await job.run(scheduledMs);
        await run.finish();
      } finally {
        clearInterval(renewal);
      }
    },
  };
}
