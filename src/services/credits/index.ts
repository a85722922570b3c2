/**
 * Credits: the balances of keys with limited usage, and the spends of verifications.
 *
 * A key's balance is `keys.remaining` minus what it has spent since its last fold. Spends are
 * appended to a journal (`credit_journal`) in group commits and kept as per-key totals in memory
 * (`pendingOf`); a verification that spends is answered only after its spend is committed. This
 * writes one row per commit instead of one random page of `keys` per spend, which on a busy key
 * space is the difference between a few microseconds and tens of them.
 *
 * Invariants:
 * - balance(key) = keys.remaining − pendingOf(key), at every moment; pendingOf counts committed
 *   and queued spends, and the journal holds exactly the committed ones.
 * - Anything that writes `keys.remaining` (credit updates, refills) first calls `settle`, which
 *   folds the key's pending total into `keys.remaining` in its own transaction.
 * - Readers of a balance subtract `pendingOf`; the verification cache keeps a balance in step.
 *
 * Cluster mode keeps no balance in memory: PgCreditSpender decides each spend in PostgreSQL.
 */
export { CreditLedger, NO_PENDING_CREDITS, type CreditAccounts, type CreditBalances } from "./ledger.ts";
export { CreditSpendFailed, PgCreditSpender, type PgCreditSpenderOptions, type SpendResult } from "./pg-spender.ts";
export type { SettlerStats } from "./pg-spend-settler.ts";
