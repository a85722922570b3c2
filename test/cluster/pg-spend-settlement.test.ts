/**
 * Credit spend statements given up on (a timeout, a broken connection), settled by their id
 * (src/services/credits/pg-spend-settler.ts): one that committed is refunded once, one that never
 * ran is cancelled so that it takes nothing if it runs afterwards. One server for the file; a
 * fresh, migrated database per test.
 */
import { describe, expect, test } from "bun:test";
import { GRANT_ONE_SQL } from "../../src/services/credits/pg-spend-batch.ts";
import { SpendSettler } from "../../src/services/credits/pg-spend-settler.ts";
import { postgresForFile } from "./pg-database.ts";
import { withDatabase as withSpendDatabase, type Database } from "./pg-spend-database.ts";
import { missing, skipWithout } from "../support/tools.ts";

describe.skipIf(skipWithout(missing.postgres(), "the settlement of PostgreSQL credit spends"))("credit spends given up on", () => {
  const pg = postgresForFile();
  const withDatabase = (use: (db: Database) => Promise<void>) => withSpendDatabase(pg, use);

  /** Settles `ids` with a settler of its own and waits until none is pending. */
  async function settled(url: string, ids: string[]): Promise<ReturnType<SpendSettler["stats"]>> {
    const settler = new SpendSettler(url, 2000);
    try {
      for (const id of ids) settler.settle(id);
      while (settler.stats().unsettled > 0) await Bun.sleep(5);
      return settler.stats();
    } finally {
      await settler.close();
    }
  }

  test("a granted spend journals what it took under its statement's id; a statement given up on that committed is refunded once", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      await db.addKey("key_2", 10);
      const spender = db.spender();
      // A lone spend (the short way) and a batch of two keys.
      await spender.spend("key_1", 3);
      await Promise.all([spender.spend("key_1", 2), spender.spend("key_2", 4), spender.spend("key_2", 20)]);
      const rows = await db.sql`SELECT id, charges, state FROM credit_spends ORDER BY created_at, id`;
      expect(rows.map((r: { charges: string; state: string }) => [JSON.parse(r.charges), r.state])).toEqual([[{ key_1: 3 }, "charged"], [{ key_1: 2, key_2: 4 }, "charged"]]);
      // As if both had been given up on after they committed; the second settling finds nothing left to give back.
      expect(await settled(db.url, rows.map((r: { id: string }) => r.id))).toMatchObject({ unsettled: 0, refunded: 2, cancelled: 0 });
      expect(await settled(db.url, rows.map((r: { id: string }) => r.id))).toMatchObject({ unsettled: 0, refunded: 0, cancelled: 0 });
      expect([await db.balanceOf("key_1"), await db.balanceOf("key_2")]).toEqual([10, 10]);
    });
  });

  test("a statement given up on before it ran is cancelled: run afterwards, it fails and takes nothing", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      const id = crypto.randomUUID();
      expect(await settled(db.url, [id])).toMatchObject({ unsettled: 0, refunded: 0, cancelled: 1 });
      await expect(db.sql.unsafe(GRANT_ONE_SQL, ["key_1", 3, id])).rejects.toThrow();
      expect(await db.balanceOf("key_1")).toBe(10);
    });
  });
});
