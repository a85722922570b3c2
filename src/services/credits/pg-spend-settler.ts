/**
 * Settles the credit-spend statements a node gave up on (pg-spender.ts): their clients were
 * answered with an error, so whatever such a statement took must be given back, once. Each
 * statement that takes credits journals its charges under its id in `credit_spends`, in its own
 * transaction; settling an id first inserts that id itself (`cancelled`), which either succeeds —
 * the statement never committed, and if it still runs it fails on the key and takes nothing — or
 * finds the statement's row (waiting for its transaction, if that is still open), whose charges
 * are then refunded and the row marked `refunded` in the same transaction.
 * Why a connection of its own: the spender's may all be stuck on a hung server, and settling
 * must go on as soon as the server answers again, without waiting behind new spends.
 */
import { SQL } from "bun";
import { within } from "../../lib/within.ts";

/** Ids waiting to be settled, at most; past this the oldest is dropped (and counted) rather than memory grow without bound. */
const MAX_PENDING = 100_000;

/** Rows of settled or answered statements are deleted this long after they were written, a batch at a time. */
const KEEP_ROWS = "1 day";
const PRUNE_BATCH = 10_000;

const CANCEL_SQL = `INSERT INTO credit_spends (id, charges, state) VALUES ($1, '{}', 'cancelled') ON CONFLICT (id) DO NOTHING RETURNING id`;
/** Locks the refunded keys in id order, as spends lock them, so that the two never deadlock. */
const LOCK_SQL = `
SELECT k.id FROM keys k, credit_spends s, jsonb_object_keys(s.charges::jsonb) AS c(key_id)
WHERE s.id = $1 AND s.state = 'charged' AND k.id = c.key_id
ORDER BY k.id FOR NO KEY UPDATE OF k`;
const REFUND_SQL = `
WITH settled AS (
  UPDATE credit_spends SET state = 'refunded' WHERE id = $1 AND state = 'charged' RETURNING charges
),
given AS (
  UPDATE keys k SET remaining = k.remaining + c.amount::int8
  FROM settled s, jsonb_each_text(s.charges::jsonb) AS c(key_id, amount)
  WHERE k.id = c.key_id AND k.remaining IS NOT NULL
)
SELECT count(*)::int AS n FROM settled`;
const PRUNE_SQL = `
DELETE FROM credit_spends WHERE id IN (
  SELECT id FROM credit_spends WHERE created_at < now() - interval '${KEEP_ROWS}' LIMIT ${PRUNE_BATCH})`;

export interface SettlerStats {
  /** Ids given up on and not settled yet. */
  unsettled: number;
  /** Statements found never committed (nothing was taken). */
  cancelled: number;
  /** Statements found committed, whose charges were given back. */
  refunded: number;
  /** Ids dropped unsettled past MAX_PENDING. */
  dropped: number;
}

export class SpendSettler {
  private readonly sql: SQL;
  private readonly pending = new Set<string>();
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly counts = { cancelled: 0, refunded: 0, dropped: 0 };
  private cancelRetry: (() => void) | undefined;

  /** `waitMs`: how long one attempt waits for the server; a failed attempt is tried again after it. */
  constructor(url: string, private readonly waitMs: number) {
    this.sql = new SQL(url, { max: 1, connectionTimeout: Math.max(1, Math.ceil(waitMs / 1000)) });
  }

  /** Settles statement `id` as soon as PostgreSQL answers. */
  settle(id: string): void {
    if (this.closed) return;
    if (this.pending.size >= MAX_PENDING) {
      const oldest = this.pending.values().next().value!;
      this.pending.delete(oldest);
      this.counts.dropped++;
    }
    this.pending.add(id);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
  }

  stats(): SettlerStats {
    return { unsettled: this.pending.size, ...this.counts };
  }

  /** Deletes a batch of old rows; failures are left for the next time. */
  prune(): void {
    if (!this.closed) void this.sql.unsafe(PRUNE_SQL).catch(() => undefined);
  }

  /** Tries once more to settle what is pending (within `waitMs`), then closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelRetry?.();
    await within(this.running ?? Promise.resolve(), this.waitMs, () => undefined);
    await this.sql.close({ timeout: 0 });
  }

  private async run(): Promise<void> {
    while (this.pending.size > 0) {
      const id = this.pending.values().next().value!;
      try {
        await within(this.settleOne(id), this.waitMs, () => {
          throw new Error("PostgreSQL did not answer in time");
        });
        this.pending.delete(id);
      } catch {
        if (this.closed) return;
        // PostgreSQL is away or hangs: the attempt is made again a moment later (it still may be answered meanwhile).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.waitMs);
          this.cancelRetry = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.cancelRetry = undefined;
        if (this.closed) return;
      }
    }
  }

  private async settleOne(id: string): Promise<void> {
    const outcome = await this.sql.begin(async (tx) => {
      if ((await tx.unsafe(CANCEL_SQL, [id])).length > 0) return "cancelled";
      // A new snapshot per statement (READ COMMITTED): the row the insert found is seen now.
      await tx.unsafe(LOCK_SQL, [id]);
      const [refunded] = await tx.unsafe(REFUND_SQL, [id]);
      return refunded.n > 0 ? "refunded" : undefined;
    });
    // Undefined: an earlier attempt, answered late, settled it already.
    if (outcome !== undefined) this.counts[outcome]++;
  }
}
