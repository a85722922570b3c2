/**
 * Tables only the cluster mode has, with no SQLite twin (test/storage/pg-schema-parity.test.ts
 * names them): the change notices that tell every node what another one changed
 * (storage/pg/changes.ts), and the runs of scheduled jobs claimed under a lease (storage/pg/job-lease.ts).
 */
import { index, pgSequence, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";

/** One counter for every workspace's changes: each notice's identity, so that a node skips a notice it already delivered. */
export const clusterChangeVersion = pgSequence("cluster_change_version");

/**
 * One row per committed change of a workspace, inserted and never updated, so that writes in one
 * workspace never contend for a row (migration 0008 dropped `cluster_changes`, which held one row
 * per workspace, updated by every write). `tx_id` is the writing transaction's id
 * (pg_current_xact_id): a poll reads the rows of transactions at or above the oldest one still
 * running when it last looked (storage/pg/changes.ts). A row that a later transaction's row of its
 * workspace supersedes is pruned: that row tells a poll the same.
 */
export const clusterChangeNotices = pgTable("cluster_change_notices", {
  workspaceId: text("workspace_id").notNull(),
  version: int8("version").notNull(),
  txId: int8("tx_id").notNull(),
}, (t) => [
  primaryKey({ columns: [t.workspaceId, t.version] }),
  uniqueIndex("cluster_change_notices_version_uq").on(t.version),
  index("cluster_change_notices_tx_idx").on(t.txId, t.version),
]);

/** One run of a scheduled job for one tick: who holds it, until when (the server's time), and when it finished. */
export const jobRuns = pgTable("job_runs", {
  job: text("job").notNull(),
  tickMs: int8("tick_ms").notNull(),
  owner: text("owner").notNull(),
  leaseUntilMs: int8("lease_until_ms").notNull(),
  finishedAtMs: int8("finished_at_ms"),
}, (t) => [primaryKey({ columns: [t.job, t.tickMs] })]);
