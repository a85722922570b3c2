/** Databases as an older version left them, for the upgrade tests: migrated up to, not including, a given migration. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../src/storage/db.ts";
import { applyMigrations } from "../../src/storage/migrate.ts";
import { MIGRATIONS } from "../../src/storage/migrations.ts";
import { SPLIT_MIGRATION } from "../../src/storage/data-dir.ts";

/** The position of migration `tag` in the journal: how many migrations come before it. */
export function migrationIndex(tag: string): number {
  const index = MIGRATIONS.findIndex((m) => m.tag === tag);
  if (index < 0) throw new Error(`no migration ${tag}`);
  return index;
}

/**
 * For the upgrade tests of the analytics tables in tollgate.db: their history there ends before
 * 0009, which drops them once their rows are in analytics.db (analytics-split.test.ts).
 */
export const UNTIL_SPLIT = { before: SPLIT_MIGRATION };

/** Opens databases in temp dirs, each migrated up to `tag`; `removeAll` (for afterEach) deletes them. */
export function databasesBefore(tag: string): { open(): Storage; removeAll(): void } {
  const dirs: string[] = [];
  return {
    open() {
      const dir = mkdtempSync(join(tmpdir(), `tollgate-before-${tag}-`));
      dirs.push(dir);
      const s = openStorage(join(dir, "tollgate.db"));
      applyMigrations(s.sqlite, MIGRATIONS.slice(0, migrationIndex(tag)));
      return s;
    },
    removeAll() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}
