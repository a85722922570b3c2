/**
 * Tables only the cluster mode has, with no SQLite twin (test/storage/pg-schema-parity.test.ts
 * names them): the change notices that tell every node what another one changed
 * (storage/pg/changes.ts), and the runs of scheduled jobs claimed under a lease (storage/pg/job-lease.ts).
 */
import { pgSequence, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";

/** One counter for every workspace's changes: the poll reads what is newer than one number, through one index. */
export const clusterChangeVersion = pgSequence("cluster_change_version");

/**
 * One row per committed change of a workspace, inserted and never updated, so that writes in one
 * workspace never contend for a row (migration 0004 dropped `cluster_changes`, which held one row
 * per workspace, updated by every write). A row that a newer one of its workspace supersedes is
 * pruned (storage/pg/changes.ts): the newer one tells a poll the same.
 */
export const clusterChangeNotices = pgTable("cluster_change_notices", {
  workspaceId: text("workspace_id").notNull(),
  version: int8("version").notNull(),
}, (t) => [primaryKey({ columns: [t.workspaceId, t.version] }), uniqueIndex("cluster_change_notices_version_uq").on(t.version)]);

/** One run of a scheduled job for one tick: who holds it, until when (the server's time), and when it finished. */
export const jobRuns = pgTable("job_runs", {
  job: text("job").notNull(),
  tickMs: int8("tick_ms").notNull(),
  owner: text("owner").notNull(),
  leaseUntilMs: int8("lease_until_ms").notNull(),
  finishedAtMs: int8("finished_at_ms"),
}, (t) => [primaryKey({ columns: [t.job, t.tickMs] })]);
