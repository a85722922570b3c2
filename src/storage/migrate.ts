/**
 * Applies the embedded migrations, recording them in drizzle's own `__drizzle_migrations` table
 * (same columns and hashes as drizzle-kit's migrator), each migration in one transaction.
 */
import type { Database } from "bun:sqlite";
import { MIGRATIONS, type EmbeddedMigration } from "./migrations.ts";

const BREAKPOINT = "--> statement-breakpoint";

/** Applies every pending migration; returns the tags applied now (empty when up to date). */
export function applyMigrations(sqlite: Database, migrations: EmbeddedMigration[] = MIGRATIONS): string[] {
  sqlite.run(`CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id INTEGER PRIMARY KEY AUTOINCREMENT, hash text NOT NULL, created_at numeric)`);
  const lastApplied = sqlite.query<{ created_at: number }, []>(`SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`);
  const applied: string[] = [];
  for (const m of migrations) {
    const hash = new Bun.CryptoHasher("sha256").update(m.sql).digest("hex");
    // Checked inside the write transaction: another process may have applied it meanwhile.
    sqlite.transaction(() => {
      const last = lastApplied.get();
      if (last && Number(last.created_at) >= m.createdAt) return;
      for (const stmt of m.sql.split(BREAKPOINT)) {
        if (stmt.trim()) sqlite.run(stmt);
      }
      sqlite.run(`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES (?, ?)`, [hash, m.createdAt]);
      applied.push(m.tag);
    }).immediate();
  }
  return applied;
}
