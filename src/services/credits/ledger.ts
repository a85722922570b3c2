/** The credit ledger: spends group-committed to the journal, per-key totals in memory (see index.ts). */
import type { Storage } from "../../storage/db.ts";
import { AppError } from "../../errors/app-error.ts";
import { BUSY_TIMEOUT_MS, inTransaction, tryInTransaction } from "../../storage/db.ts";
import type { ChangesElsewhere } from "../../storage/external-commits.ts";
import { CreditJournal, type JournalEntry } from "./journal.ts";

/** What the key service needs of the ledger. */
export interface CreditBalances {
  /** Credits this key has spent that `keys.remaining` does not show yet. */
  pendingOf(keyId: string): number;
  /** Folds these keys' pending totals into `keys.remaining` (own transaction); call before writing it. */
  settle(keyIds: readonly string[]): void;
}

/** The ledger as start, stop and the CLI use it: its journal restored, flushed and folded. */
export interface CreditAccounts extends CreditBalances {
  /** Loads the journal's pending spends; returns the keys that have some. */
  restore(): number;
  flush(): void;
  foldAll(budgetMs: number): void;
}

/**
 * The cluster mode's accounts: PostgreSQL decides and records each spend in `keys.remaining`
 * (pg-spender.ts), so no spend is ever pending in a node and there is no journal.
 */
export const NO_PENDING_CREDITS: CreditAccounts = {
  pendingOf: () => 0,
  settle: () => undefined,
  restore: () => 0,
  flush: () => undefined,
  foldAll: () => undefined,
};

interface QueuedSpend {
  keyId: string;
  cost: number;
  resolve(): void;
  reject(error: unknown): void;
}

export interface CreditLedgerLimits {
  /** The journal is rewritten as per-key totals once this many entries were appended (and 4 × the totals). */
  compactAfterEntries: number;
  /** Keys with pending totals beyond this are folded into `keys.remaining`, oldest first, at compaction. */
  maxPendingKeys: number;
  /** At most this many keys folded by one compaction, so that it stays a short pause. */
  maxFoldPerCompaction: number;
  /** How long the group commit keeps retrying while another connection holds the write lock before its spends fail. */
  retryForMs: number;
}

/** Keys folded per transaction by `foldAll`. */
const FOLD_CHUNK = 1000;
/** While another connection holds the write lock, the group commit tries again this often. */
const RETRY_MS = 1;

const DEFAULT_LIMITS: CreditLedgerLimits = {
  compactAfterEntries: 100_000, maxPendingKeys: 200_000, maxFoldPerCompaction: 10_000, retryForMs: BUSY_TIMEOUT_MS,
};

export class CreditLedger implements CreditAccounts {
  private readonly journal: CreditJournal;
  /** keyId → credits spent and not yet in `keys.remaining` (committed or queued). */
  private readonly pending = new Map<string, number>();
  private queue: QueuedSpend[] = [];
  private scheduled = false;
  /** When the group commit first found the write lock taken, while it still retries; else undefined. */
  private busySinceMs: number | undefined;
  private busyRetryCount = 0;
  private appendedSinceCompaction = 0;
  private readonly limits: CreditLedgerLimits;

  /** `changesElsewhere` is looked at before a settle, so that another process's folds and spends are in `pending` (boot.ts). */
  constructor(private readonly storage: Storage, limits: Partial<CreditLedgerLimits> = {}, private readonly changesElsewhere?: ChangesElsewhere) {
    this.journal = new CreditJournal(storage);
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /**
   * Loads the journal's totals, plus the spends still queued: at start, and once another process
   * (a CLI command beside `serve`) has committed, since it may have folded or spent credits. It reads
   * the whole journal, which compaction keeps to about one entry per key with a pending total.
   * Returns how many keys have some.
   */
  restore(): number {
    this.pending.clear();
    for (const [keyId, total] of this.journal.totals()) this.pending.set(keyId, total);
    for (const s of this.queue) this.pending.set(s.keyId, this.pendingOf(s.keyId) + s.cost);
    return this.pending.size;
  }

  pendingOf(keyId: string): number {
    return this.pending.get(keyId) ?? 0;
  }

  /**
   * Records a spend of `cost` (> 0) that the caller has checked against the key's balance; resolves
   * once it is committed, rejects (and forgets it) if the commit fails. Spends queued in one turn of
   * the event loop are committed together.
   */
  spend(keyId: string, cost: number): Promise<void> {
    this.pending.set(keyId, this.pendingOf(keyId) + cost);
    return new Promise((resolve, reject) => {
      this.queue.push({ keyId, cost, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.groupCommit());
      }
    });
  }

  /**
   * The group commit of one turn of the event loop. It never blocks the thread on the write lock:
   * while another connection (the analytics event writer, the CLI) holds it, the spends stay queued
   * (and later spends join them) and the commit is tried again a millisecond later, so verifications
   * that spend nothing go on being answered meanwhile. (A fallback to a blocking wait let a
   * checkpoint or the event writer stall the event loop under load.) After
   * `retryForMs` the spends fail with `service_unavailable`, nothing spent.
   */
  private groupCommit(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    if (this.commitQueue(false)) {
      this.busySinceMs = undefined;
      return;
    }
    this.busySinceMs ??= performance.now();
    const waitedMs = performance.now() - this.busySinceMs;
    if (waitedMs >= this.limits.retryForMs) {
      // As long as any other write would wait (BUSY_TIMEOUT_MS), but without blocking the thread meanwhile.
      this.busySinceMs = undefined;
      this.failQueue(new AppError("service_unavailable", { detail: `The database stayed locked by another connection for ${Math.round(waitedMs)} ms; no credits were spent.` }));
      return;
    }
    this.busyRetryCount++;
    this.scheduled = true;
    setTimeout(() => this.groupCommit(), RETRY_MS);
  }

  /** Commits every queued spend as one journal row and answers each, waiting for the write lock if need be; also called on stop. */
  flush(): void {
    this.commitQueue(true);
  }

  /** Rejects every queued spend with `error` and forgets it. */
  private failQueue(error: unknown): void {
    const batch = this.queue;
    this.queue = [];
    for (const s of batch) this.forget(s.keyId, s.cost);
    for (const s of batch) s.reject(error);
  }

  /** Commits the queue; false (and the queue kept) when `wait` is false and the write lock is taken. */
  private commitQueue(wait: boolean): boolean {
    const batch = this.queue;
    if (batch.length === 0) return true;
    const append = () => this.journal.append(batch.map((s): JournalEntry => [s.keyId, s.cost]));
    try {
      if (wait) inTransaction(this.storage, append);
      else if (!tryInTransaction(this.storage, append).done) return false;
      this.queue = [];
    } catch (error) {
      this.failQueue(error);
      return true;
    }
    for (const s of batch) s.resolve();
    this.appendedSinceCompaction += batch.length;
    if (this.appendedSinceCompaction >= Math.max(this.limits.compactAfterEntries, 4 * this.pending.size)) this.compact();
    return true;
  }

  settle(keyIds: readonly string[]): void {
    this.changesElsewhere?.look();
    this.flush();
    const totals: JournalEntry[] = [];
    for (const keyId of new Set(keyIds)) {
      const total = this.pending.get(keyId);
      if (total !== undefined) totals.push([keyId, total]);
    }
    if (totals.length === 0) return;
    inTransaction(this.storage, () => this.journal.foldIntoKeys(totals));
    for (const [keyId] of totals) this.pending.delete(keyId);
  }

  /**
   * On stop: commits the queue, then folds every pending total into `keys.remaining`, a thousand
   * keys per transaction, until done or `budgetMs` is spent, so that a stopped service leaves
   * balances that tollgate.db shows on its own. What is left stays in the journal for the next start.
   */
  foldAll(budgetMs: number): void {
    this.flush();
    const deadline = performance.now() + budgetMs;
    while (this.pending.size > 0 && performance.now() < deadline) this.settle([...this.pending.keys()].slice(0, FOLD_CHUNK));
    if (this.pending.size === 0) inTransaction(this.storage, () => this.journal.rewrite(this.pending));
  }

  /** Group commits put off because another connection held the write lock (for tests and metrics). */
  get busyRetries(): number {
    return this.busyRetryCount;
  }

  /** Keys with a pending total (for tests and metrics). */
  get pendingKeys(): number {
    return this.pending.size;
  }

  /**
   * Rewrites the journal as one entry per key, after folding the oldest keys beyond the cap; the
   * queue is empty here, so the totals are exactly the committed spends. A failure leaves the
   * journal as it was; the next compaction tries again.
   */
  private compact(): void {
    const excess = Math.min(this.pending.size - this.limits.maxPendingKeys, this.limits.maxFoldPerCompaction);
    if (excess > 0) this.settle([...this.pending.keys()].slice(0, excess));
    inTransaction(this.storage, () => this.journal.rewrite(this.pending));
    this.appendedSinceCompaction = 0;
  }

  private forget(keyId: string, cost: number): void {
    const left = this.pendingOf(keyId) - cost;
    if (left === 0) this.pending.delete(keyId);
    else this.pending.set(keyId, left);
  }
}
