/**
 * Applies the embedded migrations, recording them in drizzle's own `__drizzle_migrations` table
 * (same columns and hashes as drizzle-kit's migrator), each migration in one transaction.
 */
import type { Database } from "bun:sqlite";
import { MIGRATIONS, type EmbeddedMigration } from "./migrations.ts";

const BREAKPOINT = "--> statement-breakpoint";

/**
 * The database records migrations this program does not have: it was written by a newer tollgate.
 * Running on it could misread or damage data that the newer schema added, so start-up refuses
 * instead of downgrading silently.
 */
export class DatabaseTooNewError extends Error {
  constructor(readonly unknownCreatedAt: number[]) {
    super("the database was written by a newer version of tollgate: it has "
      + `${unknownCreatedAt.length} migration(s) this version does not know (created_at ${unknownCreatedAt.join(", ")}). `
      + "Run the newer tollgate binary again, or restore a backup taken before the upgrade; this version will not downgrade it.");
    this.name = "DatabaseTooNewError";
  }
}

/** Of the `recorded` created_at values, those `migrations` lacks: a newer tollgate wrote them (SQLite's and PostgreSQL's migrators alike). */
export function unknownCreatedAt(recorded: readonly number[], migrations: readonly EmbeddedMigration[]): number[] {
  const known = new Set(migrations.map((m) => m.createdAt));
  return recorded.filter((at) => !known.has(at));
}

/** The recorded migrations (their created_at) that `migrations` lacks: a newer tollgate wrote them. */
export function unknownMigrations(sqlite: Database, migrations: readonly EmbeddedMigration[]): number[] {
  const recorded = sqlite.query<{ created_at: number }, []>(`SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at`).all();
  return unknownCreatedAt(recorded.map((r) => Number(r.created_at)), migrations);
}

/** A migration's statements, as drizzle-kit separates them. */
export function migrationStatements(m: EmbeddedMigration): string[] {
  return m.sql.split(BREAKPOINT).filter((stmt) => stmt.trim());
}

/** The hash drizzle's migrators record for a migration. */
export function migrationHash(m: EmbeddedMigration): string {
  return new Bun.CryptoHasher("sha256").update(m.sql).digest("hex");
}

/** Throws DatabaseTooNewError when `__drizzle_migrations` holds entries that `migrations` lacks. */
export function refuseNewerDatabase(sqlite: Database, migrations: readonly EmbeddedMigration[]): void {
  const unknown = unknownMigrations(sqlite, migrations);
  if (unknown.length > 0) throw new DatabaseTooNewError(unknown);
}

/**
 * Applies every pending migration (with `before`, only those before that tag); returns the tags
 * applied now (empty when up to date). Throws DatabaseTooNewError, before changing anything, on a
 * database written by a newer version.
 */
export function applyMigrations(sqlite: Database, migrations: EmbeddedMigration[] = MIGRATIONS, opts: { before?: string } = {}): string[] {
  sqlite.run(`CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id INTEGER PRIMARY KEY AUTOINCREMENT, hash text NOT NULL, created_at numeric)`);
  refuseNewerDatabase(sqlite, migrations);
  const lastApplied = sqlite.query<{ created_at: number }, []>(`SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`);
  const isApplied = (m: EmbeddedMigration) => Number(lastApplied.get()?.created_at ?? -1) >= m.createdAt;
  const applied: string[] = [];
  for (const m of migrationsBefore(migrations, opts.before)) {
    // An applied migration costs a read, not a write transaction or a hash: start-up runs this for
    // both databases, and for tollgate.db in two steps (storage/data-dir.ts).
    if (isApplied(m)) continue;
    sqlite.transaction(() => {
      // Checked again under the write lock: another process may have applied it meanwhile.
      if (isApplied(m)) return;
      for (const stmt of migrationStatements(m)) sqlite.run(stmt);
      sqlite.run(`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (?, ?)`, [migrationHash(m), m.createdAt]);
      applied.push(m.tag);
    }).immediate();
  }
  return applied;
}

/** `migrations`, or those before the one tagged `before`. */
function migrationsBefore(migrations: EmbeddedMigration[], before: string | undefined): EmbeddedMigration[] {
  if (before === undefined) return migrations;
  const at = migrations.findIndex((m) => m.tag === before);
  if (at < 0) throw new Error(`no migration ${before}`);
  return migrations.slice(0, at);
}
