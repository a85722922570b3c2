/**
 * The credit ledger on a real database: what a restart (or a crash after a commit) finds, folds,
 * compaction, the cap on keys held in memory, and a failed commit.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { CreditLedger } from "../../../src/services/credits/index.ts";
import { startHarness, type Harness } from "../../support/harness.ts";
import { createApi, createKey } from "../../support/contract.ts";

let h: Harness;
let keyIds: string[];
beforeEach(async () => {
  h = await startHarness();
  const apiId = await createApi(h, "ledger");
  keyIds = [];
  for (let i = 0; i < 4; i++) keyIds.push((await createKey(h, { apiId, credits: { remaining: 1000 } })).keyId);
});
afterEach(async () => { await h.stop(); });

const stored = (keyId: string) =>
  h.embedded.storage.sqlite.query<{ remaining: number }, [string]>("SELECT remaining FROM keys WHERE id = ?1").get(keyId)!.remaining;
const journalRows = () => h.embedded.storage.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM credit_journal").get()!.n;
const ledger = (limits = {}) => new CreditLedger(h.embedded.storage, limits);

/** Spends and commits; resolves when every spend is committed. */
async function spendAll(l: CreditLedger, spends: Array<[string, number]>): Promise<void> {
  const done = Promise.all(spends.map(([keyId, cost]) => l.spend(keyId, cost)));
  l.flush();
  await done;
}

describe("journal", () => {
  test("a committed spend is pending at once and found again by a new ledger; keys.remaining is untouched", async () => {
    const a = ledger();
    await spendAll(a, [[keyIds[0]!, 3], [keyIds[0]!, 4], [keyIds[1]!, 1]]);
    expect([a.pendingOf(keyIds[0]!), a.pendingOf(keyIds[1]!), a.pendingOf(keyIds[2]!)]).toEqual([7, 1, 0]);
    expect(stored(keyIds[0]!)).toBe(1000);
    const b = ledger();
    expect(b.restore()).toBe(2);
    expect([b.pendingOf(keyIds[0]!), b.pendingOf(keyIds[1]!)]).toEqual([7, 1]);
  });

  test("restore counts the journal and the spends still queued: what another process folded, nothing of ours lost", async () => {
    const a = ledger();
    await spendAll(a, [[keyIds[0]!, 5]]);
    // Another process (a CLI command) folds the committed spends into keys.remaining.
    const other = ledger();
    other.restore();
    other.settle([keyIds[0]!]);
    const queued = a.spend(keyIds[0]!, 2);
    expect(a.restore()).toBe(1);
    expect(a.pendingOf(keyIds[0]!)).toBe(2);
    a.flush();
    await queued;
    expect(stored(keyIds[0]!) - a.pendingOf(keyIds[0]!)).toBe(993);
  });

  test("settle folds a key's total into keys.remaining, and a restart then finds nothing pending for it", async () => {
    const a = ledger();
    await spendAll(a, [[keyIds[0]!, 5], [keyIds[1]!, 2]]);
    a.settle([keyIds[0]!, keyIds[0]!, keyIds[2]!]);
    expect(stored(keyIds[0]!)).toBe(995);
    expect(a.pendingOf(keyIds[0]!)).toBe(0);
    const b = ledger();
    b.restore();
    expect([b.pendingOf(keyIds[0]!), b.pendingOf(keyIds[1]!)]).toEqual([0, 2]);
  });

  test("settle commits spends still queued before it folds", async () => {
    const a = ledger();
    const spent = a.spend(keyIds[0]!, 9);
    a.settle([keyIds[0]!]);
    await spent;
    expect(stored(keyIds[0]!)).toBe(991);
    expect(a.pendingOf(keyIds[0]!)).toBe(0);
  });
});

describe("stop", () => {
  test("foldAll commits the queue and folds every total, leaving an empty journal", async () => {
    const a = ledger();
    await spendAll(a, [[keyIds[0]!, 3], [keyIds[1]!, 4]]);
    const queued = a.spend(keyIds[2]!, 5);
    a.foldAll(1000);
    await queued;
    expect(keyIds.map(stored)).toEqual([997, 996, 995, 1000]);
    expect(a.pendingKeys).toBe(0);
    expect(journalRows()).toBe(0);
  });

  test("foldAll out of time leaves the rest in the journal, where a restart finds it", async () => {
    const a = ledger();
    const queued = a.spend(keyIds[0]!, 6);
    a.foldAll(0);
    await queued;
    expect(stored(keyIds[0]!)).toBe(1000);
    const b = ledger();
    b.restore();
    expect(b.pendingOf(keyIds[0]!)).toBe(6);
  });
});

describe("compaction", () => {
  test("rewrites the journal as one entry per key, keeping every total", async () => {
    const a = ledger({ compactAfterEntries: 50 });
    for (let round = 0; round < 12; round++) await spendAll(a, keyIds.map((id): [string, number] => [id, 1]));
    // 48 entries in 12 rows, then the 13th commit reaches 52 and compacts into one row.
    expect(journalRows()).toBe(12);
    await spendAll(a, keyIds.map((id): [string, number] => [id, 1]));
    expect(journalRows()).toBe(1);
    const b = ledger();
    b.restore();
    expect(keyIds.map((id) => b.pendingOf(id))).toEqual([13, 13, 13, 13]);
  });

  test("folds the oldest keys beyond the cap into keys.remaining", async () => {
    const a = ledger({ compactAfterEntries: 4, maxPendingKeys: 2 });
    // Compaction waits for 4 × the keys held (16 entries): the fourth round.
    for (let round = 0; round < 3; round++) await spendAll(a, keyIds.map((id, i): [string, number] => [id, i + 1]));
    expect(a.pendingKeys).toBe(4);
    await spendAll(a, keyIds.map((id, i): [string, number] => [id, i + 1]));
    expect(keyIds.map(stored)).toEqual([996, 992, 1000, 1000]);
    expect(keyIds.map((id) => a.pendingOf(id))).toEqual([0, 0, 12, 16]);
    expect(a.pendingKeys).toBe(2);
  });
});

describe("a failed commit", () => {
  test("rejects its spends and forgets them", async () => {
    const a = ledger();
    await spendAll(a, [[keyIds[0]!, 2]]);
    h.embedded.storage.sqlite.run("ALTER TABLE credit_journal RENAME TO credit_journal_away");
    const failed = a.spend(keyIds[0]!, 5);
    a.flush();
    await expect(failed).rejects.toThrow();
    expect(a.pendingOf(keyIds[0]!)).toBe(2);
    h.embedded.storage.sqlite.run("ALTER TABLE credit_journal_away RENAME TO credit_journal");
  });
});

describe("the write lock held by another connection", () => {
  test("held past retryForMs: the spend fails with service_unavailable, is forgotten, and the thread was never blocked", async () => {
    const other = new Database(h.embedded.storage.sqlite.filename);
    try {
      other.run("BEGIN IMMEDIATE");
      const a = ledger({ retryForMs: 20 });
      const failed = a.spend(keyIds[0]!, 6);
      expect(a.pendingOf(keyIds[0]!)).toBe(6);
      let turns = 0;
      let done = false;
      const outcome = failed.then(() => "spent", (e: { code?: string }) => e.code).finally(() => { done = true; });
      while (!done) {
        turns++;
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await outcome).toBe("service_unavailable");
      // Retried every millisecond for 20 ms, the event loop turning in between.
      expect(a.busyRetries).toBeGreaterThan(1);
      expect(turns).toBeGreaterThan(a.busyRetries);
      expect(a.pendingOf(keyIds[0]!)).toBe(0);
      other.run("COMMIT");
      expect(journalRows()).toBe(0);
    } finally {
      other.close();
    }
  });


  test("the group commit does not block the thread: the spend waits, and commits once the lock is free", async () => {
    const other = new Database(h.embedded.storage.sqlite.filename);
    try {
      other.run("BEGIN IMMEDIATE");
      const a = ledger();
      let settled = false;
      const spent = a.spend(keyIds[0]!, 6).then(() => { settled = true; });
      // Each retry is a later turn of the event loop: the thread was free in between.
      while (a.busyRetries < 3) await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      expect(journalRows()).toBe(0);
      const later = a.spend(keyIds[1]!, 2);
      other.run("COMMIT");
      await Promise.all([spent, later]);
      expect(journalRows()).toBe(1);
      const b = ledger();
      b.restore();
      expect([b.pendingOf(keyIds[0]!), b.pendingOf(keyIds[1]!)]).toEqual([6, 2]);
    } finally {
      other.close();
    }
  });
});
