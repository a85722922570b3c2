/**
 * The drizzle-kit migrations of the main database on PostgreSQL (`migrations/pg/`), imported as text
 * so `bun build --compile` embeds them. Every journal entry needs a line here;
 * test/cluster/pg-migrations.test.ts checks that none is missing.
 */
import journal from "../../../migrations/pg/meta/_journal.json";
import m0000 from "../../../migrations/pg/0000_init.sql" with { type: "text" };
import m0001 from "../../../migrations/pg/0001_cluster.sql" with { type: "text" };
import m0002 from "../../../migrations/pg/0002_names_fold_ascii.sql" with { type: "text" };
import m0003 from "../../../migrations/pg/0003_analytics.sql" with { type: "text" };
import m0004 from "../../../migrations/pg/0004_credit_spends.sql" with { type: "text" };
import m0005 from "../../../migrations/pg/0005_cluster_settings.sql" with { type: "text" };
import m0006 from "../../../migrations/pg/0006_workspace_usage.sql" with { type: "text" };
import m0007 from "../../../migrations/pg/0007_workspace_usage_triggers.sql" with { type: "text" };
import m0008 from "../../../migrations/pg/0008_drop_cluster_changes.sql" with { type: "text" };
import m0009 from "../../../migrations/pg/0009_cluster_change_notices.sql" with { type: "text" };
import { embedded, type EmbeddedMigration } from "../migrations.ts";

const SQL_BY_TAG: Record<string, string> = {
  "0000_init": m0000,
  "0001_cluster": m0001,
  "0002_names_fold_ascii": m0002,
  "0003_analytics": m0003,
  "0004_credit_spends": m0004,
  "0005_cluster_settings": m0005,
  "0006_workspace_usage": m0006,
  "0007_workspace_usage_triggers": m0007,
  "0008_drop_cluster_changes": m0008,
  "0009_cluster_change_notices": m0009,
};

export const PG_JOURNAL_TAGS: string[] = journal.entries.map((e) => e.tag);

/** The main database's migrations for PostgreSQL. */
export const PG_MIGRATIONS: EmbeddedMigration[] = embedded(journal, SQL_BY_TAG, "migrations/pg");
