/**
 * The drizzle-kit migrations, imported as text so `bun build --compile` embeds them: those of
 * tollgate.db in `migrations/`, those of analytics.db in `migrations/analytics/`. Every journal
 * entry needs a line here; test/storage/migrate.test.ts checks that none is missing.
 */
import journal from "../../migrations/meta/_journal.json";
import analyticsJournal from "../../migrations/analytics/meta/_journal.json";
import m0000 from "../../migrations/0000_init.sql" with { type: "text" };
import m0001 from "../../migrations/0001_credit_journal.sql" with { type: "text" };
import m0002 from "../../migrations/0002_analytics_totals.sql" with { type: "text" };
import m0003 from "../../migrations/0003_backfill_analytics_totals.sql" with { type: "text" };
import m0004 from "../../migrations/0004_raw_events_one_index.sql" with { type: "text" };
import m0005 from "../../migrations/0005_ratelimit_log.sql" with { type: "text" };
import m0006 from "../../migrations/0006_rollups_without_rowid.sql" with { type: "text" };
import m0007 from "../../migrations/0007_raw_events_in_batches.sql" with { type: "text" };
import m0008 from "../../migrations/0008_rollups_folded_from_minutes.sql" with { type: "text" };
import m0009 from "../../migrations/0009_analytics_own_file.sql" with { type: "text" };
import m0010 from "../../migrations/0010_override_wildcard_index.sql" with { type: "text" };
import m0011 from "../../migrations/0011_workspace_usage.sql" with { type: "text" };
import m0012 from "../../migrations/0012_workspace_usage_triggers.sql" with { type: "text" };
import a0000 from "../../migrations/analytics/0000_analytics.sql" with { type: "text" };
import a0001 from "../../migrations/analytics/0001_raw_events_slim.sql" with { type: "text" };
import a0002 from "../../migrations/analytics/0002_ratelimit_decisions.sql" with { type: "text" };

export interface EmbeddedMigration {
  tag: string;
  /** The journal's `when`: drizzle orders and records migrations by it. */
  createdAt: number;
  sql: string;
}

const SQL_BY_TAG: Record<string, string> = {
  "0000_init": m0000,
  "0001_credit_journal": m0001,
  "0002_analytics_totals": m0002,
  "0003_backfill_analytics_totals": m0003,
  "0004_raw_events_one_index": m0004,
  "0005_ratelimit_log": m0005,
  "0006_rollups_without_rowid": m0006,
  "0007_raw_events_in_batches": m0007,
  "0008_rollups_folded_from_minutes": m0008,
  "0009_analytics_own_file": m0009,
  "0010_override_wildcard_index": m0010,
  "0011_workspace_usage": m0011,
  "0012_workspace_usage_triggers": m0012,
};

const ANALYTICS_SQL_BY_TAG: Record<string, string> = {
  "0000_analytics": a0000,
  "0001_raw_events_slim": a0001,
  "0002_ratelimit_decisions": a0002,
};

type Journal = { entries: { tag: string; when: number }[] };

/** The journal's migrations with their SQL; throws when one has no SQL embedded. */
export function embedded(journal: Journal, sqlByTag: Record<string, string>, folder: string): EmbeddedMigration[] {
  return journal.entries.map((e) => {
    const sql = sqlByTag[e.tag];
    if (sql === undefined) throw new Error(`migration ${folder}/${e.tag} is in the journal but its SQL is not imported beside the journal`);
    return { tag: e.tag, createdAt: e.when, sql };
  });
}

export const JOURNAL_TAGS: string[] = journal.entries.map((e) => e.tag);
export const ANALYTICS_JOURNAL_TAGS: string[] = analyticsJournal.entries.map((e) => e.tag);

/** tollgate.db's migrations. */
export const MIGRATIONS: EmbeddedMigration[] = embedded(journal, SQL_BY_TAG, "migrations");

/** analytics.db's migrations. */
export const ANALYTICS_MIGRATIONS: EmbeddedMigration[] = embedded(analyticsJournal, ANALYTICS_SQL_BY_TAG, "migrations/analytics");
