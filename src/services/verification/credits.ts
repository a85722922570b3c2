/**
 * Credit spends, group-committed. A spend happens only when `remaining >= cost` (no partial spend;
 * cost 0 always passes); the conditional UPDATE makes check and spend one atomic step, decided by
 * SQLite itself. Spends that arrive in the same turn of the event loop are written in one
 * transaction, and each verification is answered only after its transaction committed, so an
 * acknowledged spend survives a crash of the process.
 */
import type { Storage } from "../../storage/db.ts";
import { inTransaction } from "../../storage/db.ts";

export interface SpendResult {
  spent: boolean;
  /** Balance after this call (unchanged when nothing was spent). */
  remaining: number;
}

interface PendingSpend {
  keyId: string;
  cost: number;
  resolve(result: SpendResult): void;
  reject(error: unknown): void;
}

export class CreditLedger {
  private readonly spendStmt;
  private readonly readStmt;
  private pending: PendingSpend[] = [];
  private scheduled = false;

  constructor(private readonly storage: Storage) {
    this.spendStmt = storage.sqlite.query<{ remaining: number }, [number, string, number]>(
      "UPDATE keys SET remaining = remaining - ?1 WHERE id = ?2 AND remaining IS NOT NULL AND remaining >= ?3 RETURNING remaining",
    );
    this.readStmt = storage.sqlite.query<{ remaining: number | null }, [string]>("SELECT remaining FROM keys WHERE id = ?1");
  }

  /** Spends `cost` credits of a key with limited credits; resolves once the spend is committed. */
  spend(keyId: string, cost: number): Promise<SpendResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ keyId, cost, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits every queued spend in one transaction and answers each; also called on stop. */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    let results: SpendResult[];
    try {
      results = inTransaction(this.storage, () => batch.map((p) => this.spendNow(p.keyId, p.cost)));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i]!));
  }

  private spendNow(keyId: string, cost: number): SpendResult {
    const row = this.spendStmt.get(cost, keyId, cost);
    if (row) return { spent: true, remaining: row.remaining };
    return { spent: false, remaining: this.readStmt.get(keyId)?.remaining ?? 0 };
  }
}
