/**
 * The SQL side of the credit ledger: the `credit_journal` table and the folds into `keys.remaining`.
 * Every method runs in the caller's transaction.
 */
import type { Statement } from "bun:sqlite";
import type { Storage } from "../../storage/db.ts";

/** `[keyId, amount]`: credits spent (positive) or folded into `keys.remaining` (negative). */
export type JournalEntry = [keyId: string, amount: number];

/** Entries per row when the journal is rewritten: rows of a few hundred KiB. */
const ENTRIES_PER_ROW = 10_000;

export class CreditJournal {
  private readonly insert: Statement<unknown, [string]>;
  private readonly fold: Statement<unknown, [number, string]>;

  constructor(private readonly storage: Storage) {
    this.insert = storage.sqlite.query<unknown, [string]>("INSERT INTO credit_journal (entries) VALUES (?1)");
    this.fold = storage.sqlite.query<unknown, [number, string]>("UPDATE keys SET remaining = remaining - ?1 WHERE id = ?2 AND remaining IS NOT NULL");
  }

  /** Appends one row of entries. */
  append(entries: readonly JournalEntry[]): void {
    if (entries.length > 0) this.insert.run(JSON.stringify(entries));
  }

  /** Every key's total over the whole journal; keys whose entries cancel out are left out. */
  totals(): Map<string, number> {
    const totals = new Map<string, number>();
    for (const row of this.storage.sqlite.query<{ entries: string }, []>("SELECT entries FROM credit_journal ORDER BY id").iterate()) {
      for (const [keyId, amount] of JSON.parse(row.entries) as JournalEntry[]) totals.set(keyId, (totals.get(keyId) ?? 0) + amount);
    }
    for (const [keyId, total] of totals) if (total === 0) totals.delete(keyId);
    return totals;
  }

  /** Replaces every row by rows holding exactly `totals` (the compaction). */
  rewrite(totals: ReadonlyMap<string, number>): void {
    this.storage.sqlite.run("DELETE FROM credit_journal");
    let row: JournalEntry[] = [];
    for (const entry of totals) {
      row.push(entry);
      if (row.length === ENTRIES_PER_ROW) {
        this.append(row);
        row = [];
      }
    }
    this.append(row);
  }

  /**
   * Subtracts each key's total from `keys.remaining` and appends the same amounts negated, so that
   * `keys.remaining` minus the journal stays each key's balance.
   */
  foldIntoKeys(totals: readonly JournalEntry[]): void {
    for (const [keyId, amount] of totals) this.fold.run(amount, keyId);
    this.append(totals.map(([keyId, amount]) => [keyId, -amount]));
  }
}
