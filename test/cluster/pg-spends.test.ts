/**
 * Credit spends decided by PostgreSQL (src/services/credits/pg-spender.ts) against a real server:
 * never overspent by concurrent spenders with pools of their own, first come first served per key
 * within a statement, committed before answered, nothing spent by a statement that failed, and a
 * row changed by another transaction while a spend waits for it decided on its newest state
 * (statements given up on: pg-spend-settlement.test.ts). One server for the file; a fresh,
 * migrated database per test.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { CreditSpendFailed, PgCreditSpender, type SpendResult } from "../../src/services/credits/index.ts";
import { postgresForFile } from "./pg-database.ts";
import { withDatabase as withSpendDatabase, type Database } from "./pg-spend-database.ts";
import { missing, skipWithout } from "../support/tools.ts";


describe.skipIf(skipWithout(missing.postgres(), "the PostgreSQL credit spends"))("credit spends in PostgreSQL", () => {
  const pg = postgresForFile();

  const withDatabase = (use: (db: Database) => Promise<void>) => withSpendDatabase(pg, use);

  /** Waits until at least (or at most) `count` statements of the database wait for a row lock (another process's progress, polled). */
  async function untilWaitingForLocks(sql: SQL, count: number, bound: "at least" | "at most" = "at least"): Promise<void> {
    for (;;) {
      const [row] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (bound === "at least" ? row.n >= count : row.n <= count) return;
      await Bun.sleep(5);
    }
  }

  /**
   * Spends `costs` of key_1 in one turn while another transaction has run `change` and holds the
   * row, then commits that transaction once the spends wait for it.
   */
  async function spendWhileChanged(db: Database, change: string, costs: number[]): Promise<SpendResult[]> {
    const spender = db.spender();
    let results: Promise<SpendResult[]> | undefined;
    await db.sql.begin(async (tx) => {
      await tx.unsafe(change);
      results = Promise.all(costs.map((cost) => spender.spend("key_1", cost)));
      await untilWaitingForLocks(db.sql, 1);
    });
    return await results!;
  }

  /**
   * What a spend of 3 on key_1 rejects with while another transaction holds the row; `meanwhile`
   * runs before that transaction ends, given the spend's settled answer.
   */
  async function failureWhileHeld(db: Database, spender: PgCreditSpender, meanwhile: (answered: Promise<unknown>) => Promise<void>): Promise<unknown> {
    let answered: Promise<unknown> | undefined;
    await db.sql.begin(async (tx) => {
      await tx`SELECT 1 FROM keys WHERE id = 'key_1' FOR UPDATE`;
      answered = spender.spend("key_1", 3).then(() => undefined, (error: unknown) => error);
      await meanwhile(answered);
      await answered;
    });
    return await answered!;
  }

  const remainingOf = (result: SpendResult) => ("remaining" in result ? result.remaining : undefined);
  /** "granted 6", "denied 5", "unlimited": a result on one line. */
  const brief = (result: SpendResult) => ("remaining" in result ? `${result.outcome} ${result.remaining}` : result.outcome);

  test("300 concurrent spends of 1 over three spenders on a balance of 100: exactly 100 granted, each balance from 99 to 0 answered once", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_hot", 100);
      const spenders = [db.spender(), db.spender(), db.spender()];
      let answers: Promise<SpendResult[]> | undefined;
      // The row is held until all three spenders' statements wait for it: they then race for real.
      await db.sql.begin(async (tx) => {
        await tx`SELECT 1 FROM keys WHERE id = 'key_hot' FOR UPDATE`;
        answers = Promise.all(Array.from({ length: 300 }, (_, i) => spenders[i % 3]!.spend("key_hot", 1)));
        await untilWaitingForLocks(db.sql, 3);
      });
      const results = await answers!;
      const granted = results.filter((r) => r.outcome === "granted");
      expect(granted.length).toBe(100);
      expect(results.filter((r) => r.outcome === "denied").length).toBe(200);
      expect(granted.map(remainingOf).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      expect(await db.balanceOf("key_hot")).toBe(0);
    });
  });

  test("spends of one turn are decided first come first served per key; one beyond the balance is denied and charges nothing", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_a", 10);
      await db.addKey("key_b", 5);
      const spender = db.spender();
      const asked: Array<[string, number]> = [["key_a", 4], ["key_b", 6], ["key_a", 7], ["key_a", 3], ["key_b", 5], ["key_a", 5], ["key_a", 0], ["key_a", 3]];
      const results = await Promise.all(asked.map(([key, cost]) => spender.spend(key, cost)));
      expect(results.map(brief)).toEqual(["granted 6", "denied 5", "denied 6", "granted 3", "granted 0", "denied 3", "granted 3", "granted 0"]);
      expect(await db.balanceOf("key_a")).toBe(0);
      expect(await db.balanceOf("key_b")).toBe(0);
    });
  });

  test("spends of one cost in a row are granted while the balance covers each, and the ones after are still decided in turn", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      const spender = db.spender();
      const costs = [3, 3, 3, 3, 3, 1, 0, 1, 2, 0];
      const results = await Promise.all(costs.map((cost) => spender.spend("key_1", cost)));
      expect(results.map(brief)).toEqual(["granted 7", "granted 4", "granted 1", "denied 1", "denied 1", "granted 0", "granted 0", "denied 0", "denied 0", "granted 0"]);
      expect(await db.balanceOf("key_1")).toBe(0);
    });
  });

  test("a spend beyond the balance alone is denied and leaves the balance as it was", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      expect(await db.spender().spend("key_1", 11)).toEqual({ outcome: "denied", remaining: 10 });
      expect(await db.balanceOf("key_1")).toBe(10);
    });
  });

  test("an answered spend is committed: a new connection reads the balance after it", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      const spender = db.spender();
      expect(await spender.spend("key_1", 3)).toEqual({ outcome: "granted", remaining: 7 });
      expect(await db.balanceOf("key_1")).toBe(7);
      await spender.close();
      expect(await db.balanceOf("key_1")).toBe(7);
    });
  });

  test("a spend whose statement PostgreSQL cancels rejects with CreditSpendFailed, nothing charged, and the balance stays", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      const spender = db.spender({ timeoutMs: 200 });
      const failure = await failureWhileHeld(db, spender, async () => {});
      expect(failure).toBeInstanceOf(CreditSpendFailed);
      expect((failure as CreditSpendFailed).mayHaveCharged).toBe(false);
      expect(await db.balanceOf("key_1")).toBe(10);
      expect(await spender.spend("key_1", 3)).toEqual({ outcome: "granted", remaining: 7 });
    });
  });

  test("spends whose commit fails reject with CreditSpendFailed, nothing charged, and are never answered granted", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      // A deferred check runs at commit, after the statement has returned its rows.
      await db.sql.unsafe(`CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$`);
      await db.sql.unsafe(`CREATE CONSTRAINT TRIGGER refuse_commit AFTER UPDATE ON keys DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()`);
      const spender = db.spender();
      for (const costs of [[3], [3, 1]]) {
        const answers = await Promise.all(costs.map((cost) => spender.spend("key_1", cost).then(() => undefined, (error: unknown) => error)));
        for (const failure of answers) {
          expect(failure).toBeInstanceOf(CreditSpendFailed);
          expect((failure as CreditSpendFailed).mayHaveCharged).toBe(false);
        }
      }
      expect(await db.balanceOf("key_1")).toBe(10);
    });
  });

  test("a spend that gets no answer in time rejects with CreditSpendFailed, saying it may have been charged", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      const failure = await failureWhileHeld(db, db.spender({ timeoutMs: 200 }), async (answered) => {
        await untilWaitingForLocks(db.sql, 1);
        // A frozen server process answers nothing, not even its own statement timeout.
        const [waiting] = await db.sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
        process.kill(waiting.pid, "SIGSTOP");
        try {
          await answered;
        } finally {
          process.kill(waiting.pid, "SIGCONT");
        }
        await untilWaitingForLocks(db.sql, 0, "at most");
      });
      expect(failure).toBeInstanceOf(CreditSpendFailed);
      expect((failure as CreditSpendFailed).mayHaveCharged).toBe(true);
      expect(await db.balanceOf("key_1")).toBe(10);
    });
  });

  test("spends that waited for a row changed by another transaction are decided on the row as committed", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 100);
      const results = await spendWhileChanged(db, "UPDATE keys SET remaining = 3 WHERE id = 'key_1'", [5, 1]);
      expect(results).toEqual([{ outcome: "denied", remaining: 3 }, { outcome: "granted", remaining: 2 }]);
      expect(await db.balanceOf("key_1")).toBe(2);
    });
  });

  test("a key made unlimited while spends wait for it is answered unlimited, and nothing is written", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 100);
      const results = await spendWhileChanged(db, "UPDATE keys SET remaining = NULL WHERE id = 'key_1'", [5, 1]);
      expect(results).toEqual([{ outcome: "unlimited" }, { outcome: "unlimited" }]);
      expect(await db.balanceOf("key_1")).toBeNull();
    });
  });

  test("unlimited keys are granted without a write; cost 0 reports the balance; unknown and deleted keys are missing", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_free", null);
      await db.addKey("key_1", 10);
      await db.addKey("key_gone", 10);
      await db.sql`UPDATE keys SET deleted_at = 2 WHERE id = 'key_gone'`;
      // A new row version changes xmin; a row lock sets xmax.
      const versionOf = async (id: string) => (await db.sql`SELECT xmin::text || '/' || xmax::text AS v FROM keys WHERE id = ${id}`)[0].v as string;
      const before = { free: await versionOf("key_free"), limited: await versionOf("key_1") };
      const spender = db.spender();
      expect(await spender.spend("key_free", 5)).toEqual({ outcome: "unlimited" });
      expect(await spender.spend("key_1", 0)).toEqual({ outcome: "granted", remaining: 10 });
      expect(await spender.spend("key_nobody", 1)).toEqual({ outcome: "missing" });
      expect(await spender.spend("key_gone", 1)).toEqual({ outcome: "missing" });
      expect({ free: await versionOf("key_free"), limited: await versionOf("key_1") }).toEqual(before);
      expect(await db.balanceOf("key_free")).toBeNull();
      expect(await db.balanceOf("key_gone")).toBe(10);
    });
  });

  test("closing rejects the spends not sent yet, nothing spent, and any spend after", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      const spender = db.spender();
      const unsent = spender.spend("key_1", 3).then(() => undefined, (error: unknown) => error);
      await spender.close();
      for (const failure of [await unsent, await spender.spend("key_1", 3).then(() => undefined, (error: unknown) => error)]) {
        expect(failure).toBeInstanceOf(CreditSpendFailed);
        expect((failure as CreditSpendFailed).mayHaveCharged).toBe(false);
      }
      expect(await db.balanceOf("key_1")).toBe(10);
    });
  });

  test("a negative or fractional cost is refused before anything is sent", async () => {
    await withDatabase(async (db) => {
      await db.addKey("key_1", 10);
      const spender = db.spender();
      await expect(spender.spend("key_1", -1)).rejects.toBeInstanceOf(RangeError);
      await expect(spender.spend("key_1", 1.5)).rejects.toBeInstanceOf(RangeError);
      expect(await db.balanceOf("key_1")).toBe(10);
    });
  });
});
