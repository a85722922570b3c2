/**
 * Credit spends for cluster mode, decided by PostgreSQL: `keys.remaining` there is the one
 * authority for a balance, no node decides from its own memory, and Redis holds no balance (losing
 * Redis loses nothing of credits). A spend is answered only after the statement that decided it has
 * committed, so an answered spend is as durable as a PostgreSQL commit (with `synchronous_commit`
 * on, the server's default) and a node's crash loses nothing answered.
 *
 * The spends of one event-loop turn go to PostgreSQL as one statement (SPEND_SQL): it locks the
 * keys it charges (in id order, so that statements of several nodes never deadlock), replays each
 * key's spends in the order they came, granting each only while the balance covers it, and writes
 * each changed balance once. Why one statement per turn and not one per spend: a key's row lock is
 * held until commit, so spends of one hot key over separate statements queue behind each other's
 * round trips and commits. One statement is in flight at a time per spender; spends that come
 * meanwhile form the next one, so a node's spends of one key are decided in the order they came.
 *
 * Unlimited keys (NULL) and zero costs are read, never locked or written. A key whose row changes
 * between the statement's snapshot and its lock so that it is no longer charged (made unlimited or
 * deleted) cannot be decided from what the statement sees: its spends go again in the next one.
 */
import { SQL } from "bun";

/** What one spend came to. `remaining` is the balance after it (after nothing, when denied). */
export type SpendResult =
  | { outcome: "granted"; remaining: number }
  | { outcome: "denied"; remaining: number }
  /** The key has no limit: granted, nothing written. */
  | { outcome: "unlimited" }
  /** No such key, or it is deleted: nothing spent. */
  | { outcome: "missing" };

/**
 * A spend that got no answer from PostgreSQL. `mayHaveCharged` is false when the statement
 * certainly did not commit (PostgreSQL refused or cancelled it), true when its fate is unknown (the
 * connection broke or no answer came in time): then the credits may have been taken, never granted.
 */
export class CreditSpendFailed extends Error {
  override readonly name = "CreditSpendFailed";
  constructor(message: string, readonly mayHaveCharged: boolean, options?: ErrorOptions) {
    super(message, options);
  }
}

export interface PgCreditSpenderOptions {
  /** postgres://… of the database holding `keys`; the spender opens a pool of its own. */
  url: string;
  /** PostgreSQL cancels a spend statement after this long (nothing charged); the spender gives up on an answer after twice this. */
  timeoutMs?: number;
  /** Connections in the pool: one carries the statement in flight, another takes over if that one hangs. */
  poolSize?: number;
  /** Spends per statement at most; more wait for the next one. */
  maxBatch?: number;
}

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_POOL_SIZE = 2;
const DEFAULT_MAX_BATCH = 1000;

interface QueuedSpend {
  keyId: string;
  cost: number;
  resolve(result: SpendResult): void;
  reject(error: unknown): void;
}

/** How the statement decided a key: from its locked row, from its snapshot (no write), or not at all. */
type KeyMode = "charge" | "read" | "unlimited" | "missing" | "retry";

interface DecidedRow {
  mode: KeyMode;
  granted: boolean | null;
  balance: string | null;
}

/**
 * $1: the spends as JSON `[[keyId, cost], …]` in the order they came. One row per spend, in that order.
 * `steps` replays each key's spends from its opening balance: turn n is granted iff its cost is at
 * most the balance left by turn n − 1. The UPDATE sees the locked (newest) rows, as the lock did.
 */
const SPEND_SQL = `
WITH RECURSIVE
spends AS MATERIALIZED (
  SELECT ord, spend->>0 AS key_id, (spend->>1)::int8 AS cost, row_number() OVER (PARTITION BY spend->>0 ORDER BY ord) AS turn
  FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS e(spend, ord)
),
wanted AS MATERIALIZED (
  SELECT key_id, bool_or(cost > 0) AS charged FROM spends GROUP BY key_id
),
locked AS MATERIALIZED (
  SELECT id, remaining FROM keys
  WHERE id IN (SELECT key_id FROM wanted WHERE charged) AND deleted_at IS NULL AND remaining IS NOT NULL
  ORDER BY id FOR NO KEY UPDATE
),
opening AS MATERIALIZED (
  SELECT w.key_id, coalesce(l.remaining, k.remaining) AS balance,
    CASE WHEN l.id IS NOT NULL THEN 'charge'
      WHEN k.id IS NULL THEN 'missing'
      WHEN k.remaining IS NULL THEN 'unlimited'
      WHEN w.charged THEN 'retry'
      ELSE 'read' END AS mode
  FROM wanted w
  LEFT JOIN locked l ON l.id = w.key_id
  LEFT JOIN keys k ON k.id = w.key_id AND k.deleted_at IS NULL
),
steps (key_id, turn, ord, granted, balance) AS (
  SELECT key_id, 0::int8, 0::int8, NULL::boolean, balance FROM opening WHERE mode IN ('charge', 'read')
  UNION ALL
  SELECT p.key_id, s.turn, s.ord, s.cost <= p.balance, CASE WHEN s.cost <= p.balance THEN p.balance - s.cost ELSE p.balance END
  FROM steps p JOIN spends s ON s.key_id = p.key_id AND s.turn = p.turn + 1
),
closing AS (
  SELECT DISTINCT ON (key_id) key_id, balance FROM steps ORDER BY key_id, turn DESC
),
written AS (
  UPDATE keys SET remaining = c.balance
  FROM closing c JOIN opening o ON o.key_id = c.key_id
  WHERE keys.id = c.key_id AND o.mode = 'charge' AND c.balance <> o.balance
  RETURNING keys.id
)
SELECT o.mode, st.granted, st.balance
FROM spends s JOIN opening o ON o.key_id = s.key_id LEFT JOIN steps st ON st.ord = s.ord
ORDER BY s.ord`;

export class PgCreditSpender {
  private readonly sql: SQL;
  private readonly timeoutMs: number;
  private readonly maxBatch: number;
  private queue: QueuedSpend[] = [];
  private scheduled = false;
  private inFlight = false;

  constructor(options: PgCreditSpenderOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    if (!(this.timeoutMs >= 1)) throw new RangeError(`timeoutMs must be at least 1, not ${this.timeoutMs}`);
    if (!(this.maxBatch >= 1)) throw new RangeError(`maxBatch must be at least 1, not ${this.maxBatch}`);
    this.sql = new SQL(options.url, {
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      connectionTimeout: Math.ceil(this.timeoutMs / 1000),
      connection: { statement_timeout: this.timeoutMs },
    });
  }

  /**
   * Spends `cost` (a non-negative integer) of the key's credits if its balance covers it, deciding
   * in PostgreSQL; resolves after the decision is committed. Cost 0 reports the balance. Rejects
   * with CreditSpendFailed when PostgreSQL gives no answer, within about 2 × 2 × timeoutMs.
   */
  spend(keyId: string, cost: number): Promise<SpendResult> {
    if (!Number.isSafeInteger(cost) || cost < 0) return Promise.reject(new RangeError(`cost must be a non-negative integer, not ${cost}`));
    return new Promise((resolve, reject) => {
      this.queue.push({ keyId, cost, resolve, reject });
      this.schedule();
    });
  }

  /** Closes the pool; spends still queued or in flight reject. */
  async close(): Promise<void> {
    await this.sql.close();
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.sendBatch();
    });
  }

  private async sendBatch(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight = true;
    try {
      const rows = await this.bounded(this.sql.unsafe<DecidedRow[]>(SPEND_SQL, [JSON.stringify(batch.map((s) => [s.keyId, s.cost]))]));
      this.answer(batch, rows);
    } catch (error) {
      const failure = asSpendFailure(error, this.timeoutMs);
      for (const s of batch) s.reject(failure);
    } finally {
      this.inFlight = false;
      this.schedule();
    }
  }

  /** Resolves each spend from its row; spends of keys to decide again go first in the next statement. */
  private answer(batch: QueuedSpend[], rows: DecidedRow[]): void {
    const again: QueuedSpend[] = [];
    batch.forEach((s, i) => {
      const row = rows[i]!;
      if (row.mode === "retry") again.push(s);
      else s.resolve(resultOf(row));
    });
    this.queue.unshift(...again);
  }

  /** `reply`, or a CreditSpendFailed once twice the statement timeout passed without one. */
  private async bounded<T>(reply: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waitMs = 2 * this.timeoutMs;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CreditSpendFailed(`PostgreSQL did not answer a credit spend within ${waitMs} ms`, true)), waitMs);
    });
    try {
      return await Promise.race([reply, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function resultOf(row: DecidedRow): SpendResult {
  if (row.mode === "unlimited") return { outcome: "unlimited" };
  if (row.mode === "missing") return { outcome: "missing" };
  return { outcome: row.granted ? "granted" : "denied", remaining: Number(row.balance) };
}

/**
 * PostgreSQL's own error (a refused or cancelled statement: SQLSTATE in `errno`) means the
 * statement rolled back; anything else (a broken connection) leaves its fate unknown.
 */
function asSpendFailure(error: unknown, timeoutMs: number): CreditSpendFailed {
  if (error instanceof CreditSpendFailed) return error;
  const code = (error as { code?: unknown }).code;
  const sqlState = (error as { errno?: unknown }).errno;
  if (code === "ERR_POSTGRES_SERVER_ERROR") {
    const detail = sqlState === "57014" ? `it ran past ${timeoutMs} ms and was cancelled` : `PostgreSQL refused it (${String(sqlState)})`;
    return new CreditSpendFailed(`No credits were spent: ${detail}`, false, { cause: error });
  }
  return new CreditSpendFailed(`A credit spend got no answer from PostgreSQL; it may have been charged`, true, { cause: error });
}
