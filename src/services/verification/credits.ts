/**
 * How a verification takes credits from a metered key, in each mode. Embedded: the cached snapshot's
 * balance decides at once (the credit ledger keeps it exact in this one process) and the spend is
 * answered once its group commit is written. Cluster: several nodes spend from one balance, so
 * PostgreSQL decides each spend (credits/pg-spender.ts) and the snapshot's balance is only a hint.
 */
import type { Maybe } from "../../storage/work.ts";
import type { CreditLedger, PgCreditSpender } from "../credits/index.ts";
import type { KeySnapshot } from "./snapshot.ts";

/** `granted`: the cost was taken (or was 0); `remaining` is the balance after. `missing`: the key is gone. */
export type CreditDecision = { granted: boolean; remaining: number } | { granted: true; remaining: null } | "missing";

export interface CreditTaker {
  /** Takes `cost` (>= 0) of a metered key's credits when its balance covers it. */
  take(snap: KeySnapshot, cost: number): Maybe<CreditDecision>;
}

/**
 * The embedded mode's: the snapshot's balance is taken at once, so concurrent verifications see
 * it; a failed commit drops the key from the cache (`dropKey`), so the next verification reloads
 * the balance, and fails this verification.
 */
export class LedgerCredits implements CreditTaker {
  constructor(private readonly ledger: CreditLedger, private readonly dropKey: (keyId: string) => void) {}

  take(snap: KeySnapshot, cost: number): Maybe<CreditDecision> {
    const remaining = snap.remaining!;
    if (remaining < cost) return { granted: false, remaining };
    if (cost === 0) return { granted: true, remaining };
    const after = remaining - cost;
    snap.remaining = after;
    return this.ledger.spend(snap.keyId, cost).then(() => ({ granted: true, remaining: after }), (error: unknown) => {
      this.dropKey(snap.keyId);
      throw error;
    });
  }
}

/** The cluster mode's: PostgreSQL's balance decides; the snapshot keeps the last balance seen, for the next hint. */
export class PostgresCredits implements CreditTaker {
  constructor(private readonly spender: PgCreditSpender) {}

  async take(snap: KeySnapshot, cost: number): Promise<CreditDecision> {
    const result = await this.spender.spend(snap.keyId, cost);
    switch (result.outcome) {
      case "granted":
      case "denied":
        snap.remaining = result.remaining;
        return { granted: result.outcome === "granted", remaining: result.remaining };
      case "unlimited":
        snap.remaining = null;
        return { granted: true, remaining: null };
      case "missing":
        return "missing";
    }
  }
}
