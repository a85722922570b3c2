/**
 * A fresh migrated PostgreSQL database with one workspace and key space, and what the credit-spend
 * tests do with it (keys, balances read over a new connection, spenders closed with it): shared by
 * pg-spends.test.ts and pg-spend-settlement.test.ts.
 */
import { SQL } from "bun";
import { PgCreditSpender } from "../../src/services/credits/index.ts";
import type { postgresForFile } from "./pg-database.ts";

export interface Database {
  /** A client of the database apart from every spender's pool. */
  sql: SQL;
  /** The database's URL. */
  url: string;
  /** Inserts a key with this balance (null: unlimited). */
  addKey(id: string, remaining: number | null): Promise<void>;
  /** The key's balance read over a new connection. */
  balanceOf(id: string): Promise<number | null>;
  /** A spender on the database; closed with it. */
  spender(options?: { timeoutMs?: number }): PgCreditSpender;
}

/** Runs `use` with a new migrated database of `pg`'s server holding one workspace and key space. */
export async function withDatabase(pg: ReturnType<typeof postgresForFile>, use: (db: Database) => Promise<void>): Promise<void> {
  const url = new URL(await pg.freshDatabase());
  const sql = pg.client(url.href);
  const spenders: PgCreditSpender[] = [];
  try {
    await sql`INSERT INTO workspaces (id, name, created_at) VALUES ('ws_1', 'acme', 1)`;
    await sql`INSERT INTO key_spaces (id, workspace_id, created_at) VALUES ('ks_1', 'ws_1', 1)`;
    await use({
      sql, url: url.href,
      addKey: async (id, remaining) => {
        await sql`INSERT INTO keys (id, workspace_id, key_space_id, hash, start, remaining, created_at)
          VALUES (${id}, 'ws_1', 'ks_1', ${`hash_${id}`}, 'sk_', ${remaining}, 1)`;
      },
      balanceOf: async (id) => {
        const fresh = new SQL(url.href, { max: 1 });
        try {
          const [row] = await fresh`SELECT remaining FROM keys WHERE id = ${id}`;
          return row.remaining === null ? null : Number(row.remaining);
        } finally {
          await fresh.close();
        }
      },
      spender: (options) => {
        const spender = new PgCreditSpender({ url: url.href, ...options });
        spenders.push(spender);
        return spender;
      },
    });
  } finally {
    await Promise.all(spenders.map((s) => s.close()));
  }
}

