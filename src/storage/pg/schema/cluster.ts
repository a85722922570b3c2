/**
 * Tables only the cluster mode has, with no SQLite twin (test/storage/pg-schema-parity.test.ts
 * names them): the change versions that tell every node what another one changed
 * (storage/pg/changes.ts), and the runs of scheduled jobs claimed under a lease (storage/pg/job-lease.ts).
 */
import { pgSequence, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";

/** One counter for every workspace's changes: the poll reads what is newer than one number, through one index. */
export const clusterChangeVersion = pgSequence("cluster_change_version");

/** The version of each workspace's latest committed change; a newer change overwrites it. */
export const clusterChanges = pgTable("cluster_changes", {
  workspaceId: text("workspace_id").primaryKey(),
  version: int8("version").notNull(),
}, (t) => [uniqueIndex("cluster_changes_version_uq").on(t.version)]);

/** One run of a scheduled job for one tick: who holds it, until when (the server's time), and when it finished. */
export const jobRuns = pgTable("job_runs", {
  job: text("job").notNull(),
  tickMs: int8("tick_ms").notNull(),
  owner: text("owner").notNull(),
  leaseUntilMs: int8("lease_until_ms").notNull(),
  finishedAtMs: int8("finished_at_ms"),
}, (t) => [primaryKey({ columns: [t.job, t.tickMs] })]);
