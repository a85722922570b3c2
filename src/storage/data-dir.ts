/**
 * The data directory's two databases. `tollgate.db` holds everything the service must never lose:
 * workspaces, keys, credits, permissions, rate-limit state and the audit log. `analytics.db` holds
 * the verification events and their rollups, written by the event writer's thread. Apart, each
 * file has its own write lock and WAL: the writer's commits, and the checkpoints that copy its
 * many pages back into the file (at 100,000 keys several thousand WAL frames a second), never
 * hold up a credit spend. No transaction needs both: an event is written after its verification.
 *
 * Databases written before the split hold the analytics tables in tollgate.db (its migrations up
 * to 0008). Opening one copies their rows into analytics.db in one transaction, then tollgate.db's
 * migration 0009 drops them there. Interrupted between the two, the next start finds analytics.db
 * holding rows already and only drops; an older tollgate.db restored beside a newer analytics.db
 * does the same, since analytics.db already has everything the older file had.
 */
import { join } from "node:path";
import { getTableName } from "drizzle-orm";
import type { Database } from "bun:sqlite";
import { openStorage, type Storage } from "./db.ts";
import { applyMigrations } from "./migrate.ts";
import { ANALYTICS_MIGRATIONS, MIGRATIONS } from "./migrations.ts";
import { ANALYTICS_TABLES } from "./schema/analytics.ts";

export const DATABASE_FILE = "tollgate.db";
export const ANALYTICS_DATABASE_FILE = "analytics.db";

/** tollgate.db's migration that drops the analytics tables, once their rows are in analytics.db. */
export const SPLIT_MIGRATION = "0009_analytics_own_file";

export interface DataStores {
  /** tollgate.db. */
  storage: Storage;
  /** analytics.db. */
  analytics: Storage;
  /** Migrations applied while opening, analytics.db's prefixed `analytics/`. */
  applied: string[];
  /** Closes both. */
  close(): void;
}

/** Opens (creating when missing) and migrates both databases of `dataDir`, which must exist. */
export function openDataStores(dataDir: string): DataStores {
  const storage = openStorage(join(dataDir, DATABASE_FILE));
  let analytics: Storage | undefined;
  const close = () => {
    analytics?.close();
    storage.close();
  };
  try {
    const applied = applyMigrations(storage.sqlite, MIGRATIONS, { before: SPLIT_MIGRATION });
    analytics = openStorage(join(dataDir, ANALYTICS_DATABASE_FILE));
    applied.push(...applyMigrations(analytics.sqlite, ANALYTICS_MIGRATIONS).map((tag) => `analytics/${tag}`));
    if (hasTable(storage.sqlite, getTableName(ANALYTICS_TABLES[0]))) copyAnalyticsRows(storage.sqlite, analytics.sqlite.filename);
    applied.push(...applyMigrations(storage.sqlite, MIGRATIONS));
    return { storage, analytics, applied, close };
  } catch (error) {
    close();
    throw error;
  }
}

function hasTable(sqlite: Database, table: string): boolean {
  return sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== null;
}

/**
 * Copies every analytics table's rows from `main` into the file at `analyticsPath`, in one
 * transaction there, unless that file holds rows already (checked inside the transaction, so two
 * processes opening the data dir at once copy once).
 */
function copyAnalyticsRows(main: Database, analyticsPath: string): void {
  main.run("ATTACH DATABASE ? AS analytics", [analyticsPath]);
  try {
    main.transaction(() => {
      const tables = ANALYTICS_TABLES.map((t) => getTableName(t));
      if (tables.some((table) => main.query(`SELECT 1 FROM analytics.${table} LIMIT 1`).get() !== null)) return;
      for (const table of tables) {
        // By name: the columns' order differs where a migration added one to the old table. Those
        // that analytics.db's later migrations added take their defaults, which describe the old rows.
        const columns = main.query<{ name: string }, [string]>(
          "SELECT name FROM pragma_table_info(?1, 'analytics') WHERE name IN (SELECT name FROM pragma_table_info(?1, 'main'))",
        ).all(table).map((c) => `"${c.name}"`).join(", ");
        main.run(`INSERT INTO analytics.${table} (${columns}) SELECT ${columns} FROM main.${table}`);
      }
    }).immediate();
  } finally {
    main.run("DETACH DATABASE analytics");
  }
}
