/**
 * Runs of scheduled jobs claimed under a lease, so that when every node's scheduler fires the same
 * tick, one node runs the job: the first claim of a (job, tick) wins; a claimant that dies holding
 * it loses it when its lease ends, and another may take the run over; a finished run is recorded
 * and never claimed again.
 * Leases are timed by the server's clock, not the nodes': one clock for every claimant, so a node
 * whose clock runs ahead cannot end another's lease early.
 * A run taken over may have been half done by the claimant that lost it: jobs must be idempotent
 * (the refills and prunes are: each does what is due at its time).
 */
import { and, eq, isNotNull, isNull, lt, sql } from "drizzle-orm";
import type { PgDb } from "./db.ts";
import { jobRuns } from "./schema/cluster.ts";

/** Finished runs are kept this long after their tick; older ticks are refused, since their record may be gone. */
export const RUN_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The server's time in Unix ms. */
const serverNowMs = sql`(extract(epoch from clock_timestamp()) * 1000)::int8`;

/** A claimed run of one job for one tick. */
export class RunLease {
  private readonly held;

  constructor(
    private readonly db: PgDb,
    readonly job: string,
    readonly tickMs: number,
    /** The claim's own token: each claim, even by one node, is a different owner. */
    readonly owner: string,
    /** When the lease ends, by the server's clock, as of the claim or the last renewal. */
    public leaseUntilMs: number,
  ) {
    this.held = and(eq(jobRuns.job, job), eq(jobRuns.tickMs, tickMs), eq(jobRuns.owner, owner), isNull(jobRuns.finishedAtMs));
  }

  /** Extends the lease to `leaseMs` from now; false when the run was taken over (or finished) meanwhile. */
  async renew(leaseMs: number): Promise<boolean> {
    checkLeaseMs(leaseMs);
    const [row] = await this.db.update(jobRuns).set({ leaseUntilMs: sql`${serverNowMs} + ${leaseMs}::int8` }).where(this.held)
      .returning({ leaseUntilMs: jobRuns.leaseUntilMs });
    if (row === undefined) return false;
    this.leaseUntilMs = row.leaseUntilMs;
    return true;
  }

  /**
   * Records the run finished, for good, and forgets the job's runs past the retention; false when
   * the run was taken over meanwhile (the claimant that took it records it).
   */
  async finish(): Promise<boolean> {
    const finished = await this.db.update(jobRuns).set({ finishedAtMs: serverNowMs }).where(this.held).returning({ job: jobRuns.job });
    await this.db.delete(jobRuns).where(and(
      eq(jobRuns.job, this.job), lt(jobRuns.tickMs, sql`${serverNowMs} - ${RUN_RETENTION_MS}::int8`), isNotNull(jobRuns.finishedAtMs),
    ));
    return finished.length > 0;
  }
}

export class JobLeases {
  constructor(private readonly db: PgDb) {}

  /**
   * Claims the run of `job` for `tickMs`: the tick's scheduled time, the same on every node (not
   * the time the node's scheduler fired). Resolves to the lease when this claim won, or undefined
   * when another claimant holds a live lease, the run finished, or the tick is past the retention.
   */
  async claimRun(job: string, tickMs: number, leaseMs: number): Promise<RunLease | undefined> {
    if (job.length === 0) throw new RangeError("a job needs a name");
    if (!Number.isSafeInteger(tickMs)) throw new RangeError(`tickMs must be an integer of Unix ms, not ${tickMs}`);
    checkLeaseMs(leaseMs);
    const owner = crypto.randomUUID();
    // One statement: concurrent claims of one (job, tick) conflict on its key, and PostgreSQL lets
    // exactly one of them insert or take over; the others find a live lease and return nothing.
    const rows = await this.db.execute<{ lease_until_ms: string }>(sql`
      INSERT INTO ${jobRuns} (job, tick_ms, owner, lease_until_ms)
      SELECT ${job}, ${tickMs}::int8, ${owner}, ${serverNowMs} + ${leaseMs}::int8
      WHERE ${tickMs}::int8 >= ${serverNowMs} - ${RUN_RETENTION_MS}::int8
      ON CONFLICT (job, tick_ms) DO UPDATE SET owner = excluded.owner, lease_until_ms = excluded.lease_until_ms
      WHERE ${jobRuns.finishedAtMs} IS NULL AND ${jobRuns.leaseUntilMs} <= ${serverNowMs}
      RETURNING lease_until_ms::text AS lease_until_ms`);
    const [claimed] = rows;
    return claimed === undefined ? undefined : new RunLease(this.db, job, tickMs, owner, Number(claimed.lease_until_ms));
  }
}

function checkLeaseMs(leaseMs: number): void {
  if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0) throw new RangeError(`leaseMs must be a positive integer, not ${leaseMs}`);
}

/** Claims of runs as a scheduler's leased jobs take them (jobs/leased.ts): leases of `leaseMs`, renewed every third of it. */
export function leaseClaims(leases: JobLeases, leaseMs: number) {
  checkLeaseMs(leaseMs);
  return {
    renewEveryMs: Math.max(1, Math.floor(leaseMs / 3)),
    async claim(job: string, scheduledMs: number) {
      const lease = await leases.claimRun(job, scheduledMs, leaseMs);
      return lease === undefined ? undefined : { renew: () => lease.renew(leaseMs), finish: () => lease.finish() };
    },
  };
}
