/**
 * Credit spends. A spend happens only when `remaining >= cost` (no partial spend; cost 0 always
 * passes) and is committed to SQLite before the verification answers, so an acknowledged spend
 * survives a crash. The conditional UPDATE makes the check and the spend one atomic step.
 */
import type { Storage } from "../../storage/db.ts";

export interface SpendResult {
  spent: boolean;
  /** Balance after this call (unchanged when nothing was spent). */
  remaining: number;
}

export class CreditLedger {
  private readonly spendStmt;
  private readonly readStmt;

  constructor(storage: Storage) {
    this.spendStmt = storage.sqlite.query<{ remaining: number }, [number, string, number]>(
      "UPDATE keys SET remaining = remaining - ?1 WHERE id = ?2 AND remaining IS NOT NULL AND remaining >= ?3 RETURNING remaining",
    );
    this.readStmt = storage.sqlite.query<{ remaining: number | null }, [string]>("SELECT remaining FROM keys WHERE id = ?1");
  }

  /** Spends `cost` credits of a key with limited credits. */
  spend(keyId: string, cost: number): SpendResult {
    const row = this.spendStmt.get(cost, keyId, cost);
    if (row) return { spent: true, remaining: row.remaining };
    return { spent: false, remaining: this.readStmt.get(keyId)?.remaining ?? 0 };
  }
}
