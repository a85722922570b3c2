/**
 * Applies the embedded PostgreSQL migrations, recorded where and as drizzle's PostgreSQL migrator
 * records them (`drizzle.__drizzle_migrations`: hash, created_at), so drizzle-kit reads the same
 * state. Not drizzle's migrator itself: it reads files from a folder (the executable carries none),
 * and it takes no lock, so nodes starting together could apply one migration twice; here all of it
 * runs in one transaction behind a transaction-level advisory lock.
 */
import { SQL } from "bun";
import { DatabaseTooNewError, migrationHash, migrationStatements, unknownCreatedAt } from "../migrate.ts";
import type { EmbeddedMigration } from "../migrations.ts";
import { PG_MIGRATIONS } from "./migrations.ts";

/** The advisory lock key that serializes migrating: at most one node migrates a database at a time. */
export const MIGRATION_LOCK_KEY = 0x746f6c6c67617465n;

/**
 * Applies every pending migration of `migrations` through `sql`, in one transaction; returns the
 * tags applied now (empty when up to date). Throws DatabaseTooNewError, changing nothing, when the
 * database records migrations that `migrations` lacks (a newer tollgate wrote it).
 */
export async function applyPgMigrations(sql: SQL, migrations: readonly EmbeddedMigration[] = PG_MIGRATIONS): Promise<string[]> {
  return await sql.begin(async (tx) => {
    // Taken before the schema and table exist: concurrent `CREATE … IF NOT EXISTS` can still collide.
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "drizzle"`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS "drizzle"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
    const rows: { created_at: string }[] = await tx.unsafe(`SELECT created_at FROM "drizzle"."__drizzle_migrations" ORDER BY created_at`);
    const recorded = rows.map((r) => Number(r.created_at));
    const unknown = unknownCreatedAt(recorded, migrations);
    if (unknown.length > 0) throw new DatabaseTooNewError(unknown);
    const lastApplied = recorded.at(-1) ?? -1;
    const applied: string[] = [];
    for (const m of migrations) {
      if (m.createdAt <= lastApplied) continue;
      for (const statement of migrationStatements(m)) await tx.unsafe(statement);
      await tx`INSERT INTO "drizzle"."__drizzle_migrations" (hash, created_at) VALUES (${migrationHash(m)}, ${m.createdAt})`;
      applied.push(m.tag);
    }
    return applied;
  });
}

/** Applies the pending migrations to the database at `url` (postgres://…) over a connection of its own. */
export async function migratePostgres(url: string): Promise<string[]> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await applyPgMigrations(sql);
  } catch (error) {
    throw explainRefusedRole(error);
  } finally {
    await sql.close();
  }
}

/**
 * PostgreSQL's "permission denied to create role" (42501) names no role and no way out: the one
 * role the migrations create is the analytics reader, and docs/cluster.md says what to grant.
 */
function explainRefusedRole(error: unknown): unknown {
  const { errno, message } = error as { errno?: unknown; message?: unknown };
  if (errno !== "42501" || typeof message !== "string" || !message.includes("create role")) return error;
  return new Error(`${message}: the migrations create the role tollgate_analytics_reader, which needs CREATEROLE. `
    + "Either ALTER ROLE <this user> CREATEROLE, or have a DBA run `CREATE ROLE tollgate_analytics_reader NOLOGIN; "
    + "GRANT tollgate_analytics_reader TO <this user> WITH ADMIN OPTION;` once (docs/cluster.md, Setting it up); nothing was migrated", { cause: error });
}
