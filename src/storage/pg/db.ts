/**
 * drizzle over Bun's PostgreSQL client, the way the cluster mode's record stores use it: the types
 * of a database or a transaction in it, and the text comparisons that answer as SQLite's do.
 * SQLite compares text by bytes (BINARY) and its LIKE folds ASCII letters only; PostgreSQL follows
 * the database's collation, so ids and names are compared under COLLATE "C", where both hold.
 */
import { SQL as BunSql } from "bun";
import { sql, type SQL, type SQLWrapper, type TablesRelationalConfig } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import type { BunSQLQueryResultHKT } from "drizzle-orm/bun-sql";
import type { PgDatabase } from "drizzle-orm/pg-core";
import { DuplicateRecord, inCauses } from "../records/errors.ts";

/** A drizzle database or transaction over Bun's client, whatever its schema. */
export type PgDb = PgDatabase<BunSQLQueryResultHKT, Record<string, unknown>, TablesRelationalConfig>;

/** A drizzle database over a client the caller owns. */
export function pgDatabase(client: BunSql): PgDb {
  return drizzle({ client }) as unknown as PgDb;
}

/**
 * The session settings of the connections the record stores' units run on (Bun's `connection`
 * option): every transaction READ COMMITTED, whatever the database's default, without a SET per
 * transaction (drizzle's isolationLevel option sends one).
 */
export const RECORDS_SESSION = { default_transaction_isolation: "read committed" };

/** A drizzle database over a pool of `max` connections to `url` (RECORDS_SESSION), and what closes the pool. */
export function openPg(url: string, max: number): { db: PgDb; close(): Promise<void> } {
  const client = new BunSql(url, { max, connection: RECORDS_SESSION });
  return { db: pgDatabase(client), close: () => client.close() };
}

/** `identifier` as a quoted PostgreSQL (and SQLite) identifier. */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** `value` as text compared and sorted by bytes, as SQLite's BINARY collation does. */
export function byBytes(value: SQLWrapper): SQL {
  return sql`${value} COLLATE "C"`;
}

/** `value LIKE pattern ESCAPE '\'` with SQLite's folding: ASCII letters only. */
export function likeAscii(value: SQLWrapper, pattern: string): SQL {
  return sql`${value} COLLATE "C" ILIKE ${pattern} ESCAPE '\\'`;
}

/** Awaits `write`; PostgreSQL's refusal of a duplicate in a unique index (23505) becomes DuplicateRecord. */
export async function rethrowPgDuplicate<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (inCauses(error, (e) => e.errno === "23505")) throw new DuplicateRecord({ cause: error });
    throw error;
  }
}
