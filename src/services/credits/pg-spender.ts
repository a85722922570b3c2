/**
 * Credit spends for cluster mode, decided by PostgreSQL: `keys.remaining` there is the one
 * authority for a balance, no node decides from its own memory, and Redis holds no balance (losing
 * Redis loses nothing of credits). A spend is answered only after the statement that decided it has
 * committed, so an answered spend is as durable as a PostgreSQL commit (with `synchronous_commit`
 * on, the server's default) and a node's crash loses nothing answered.
 *
 * The spends of one event-loop turn go to PostgreSQL as one statement (pg-spend-batch.ts): it
 * locks the keys it charges (in id order, so that statements of several nodes never deadlock),
 * replays each key's spends in the order they came, granting each only while the balance covers
 * it, and writes each changed balance once. Why not one statement per spend: a key's row lock is
 * held until commit, so spends of one hot key over separate statements queue behind each other's
 * round trips and commits. One statement is in flight at a time per spender; spends that come
 * meanwhile form the next one, so a node's spends of one key are decided in the order they came.
 * A turn with one spend first tries a plain conditional decrement, which costs less to plan.
 *
 * Unlimited keys (NULL) and zero costs are read, never locked or written. A key whose row changes
 * between the statement's snapshot and its lock so that it is no longer charged (made unlimited or
 * deleted) cannot be decided from what the statement sees: its spends go again in the next one.
 */
import { SQL } from "bun";
import { within } from "../../lib/within.ts";
import { StoreUnreachable } from "../../storage/unreachable.ts";
import { GRANT_ONE_SQL, SpendBatch, type SpendResult } from "./pg-spend-batch.ts";

export type { SpendResult };

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

export class PgCreditSpender {
  private readonly sql: SQL;
  private readonly timeoutMs: number;
  private readonly maxBatch: number;
  private queue: QueuedSpend[] = [];
  private scheduled = false;
  private inFlight = false;
  private closed = false;

  constructor(options: PgCreditSpenderOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    if (!(this.timeoutMs >= 1)) throw new RangeError(`timeoutMs must be at least 1, not ${this.timeoutMs}`);
    if (!(this.maxBatch >= 1)) throw new RangeError(`maxBatch must be at least 1, not ${this.maxBatch}`);
    this.sql = new SQL(options.url, {
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      connectionTimeout: Math.ceil(this.timeoutMs / 1000),
      // A generic plan, fitted to no batch size, turned a batch of a thousand keys many times slower.
      connection: { statement_timeout: this.timeoutMs, plan_cache_mode: "force_custom_plan" },
    });
  }

  /**
   * Spends `cost` (a non-negative integer) of the key's credits if its balance covers it, deciding
   * in PostgreSQL; resolves after the decision is committed. Cost 0 reports the balance. Rejects
   * with CreditSpendFailed when PostgreSQL gives no answer: each statement is given up on after
   * 2 × timeoutMs, and a spend waits for at most the batch in flight and its own, each of at most
   * two statements (longer only while its key keeps being made unlimited or deleted under it).
   */
  spend(keyId: string, cost: number): Promise<SpendResult> {
    if (!Number.isSafeInteger(cost) || cost < 0) return Promise.reject(new RangeError(`cost must be a non-negative integer, not ${cost}`));
    if (this.closed) return Promise.reject(new CreditSpendFailed("The credit spender is closed; nothing was spent", false));
    return new Promise((resolve, reject) => {
      this.queue.push({ keyId, cost, resolve, reject });
      this.schedule();
    });
  }

  /** Rejects the spends not sent yet (nothing spent), waits for the statement in flight, and closes the pool. */
  async close(): Promise<void> {
    this.closed = true;
    const unsent = this.queue;
    this.queue = [];
    for (const s of unsent) s.reject(new CreditSpendFailed("The credit spender was closed before this spend was sent; nothing was spent", false));
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
    const spends = this.queue.splice(0, this.maxBatch);
    this.inFlight = true;
    try {
      const results = await this.decide(spends);
      for (const s of spends) {
        const result = results.get(s);
        if (result !== undefined) s.resolve(result);
      }
      this.queue.unshift(...spends.filter((s) => results.get(s) === undefined));
    } catch (error) {
      const failure = asSpendFailure(error, this.timeoutMs);
      for (const s of spends) s.reject(failure);
    } finally {
      this.inFlight = false;
      this.schedule();
    }
  }

  /** Each spend's result; `undefined` for spends to decide again. A lone spend tries the short way first. */
  private async decide(spends: QueuedSpend[]): Promise<Map<QueuedSpend, SpendResult | undefined>> {
    const only = spends.length === 1 ? spends[0]! : undefined;
    if (only !== undefined && only.cost > 0) {
      const [granted] = await this.bounded<Array<{ remaining: string }>>(this.sql.unsafe(GRANT_ONE_SQL, [only.keyId, only.cost]));
      if (granted !== undefined) return new Map([[only, { outcome: "granted", remaining: Number(granted.remaining) }]]);
    }
    const batch = new SpendBatch(spends);
    const [statement, parameters] = batch.statement();
    return batch.results(await this.bounded(this.sql.unsafe(statement, parameters)));
  }

  /** `reply`, or a CreditSpendFailed once twice the statement timeout passed without one. */
  private bounded<T>(reply: Promise<T>): Promise<T> {
    const waitMs = 2 * this.timeoutMs;
    return within(reply, waitMs, () => {
      const message = `PostgreSQL did not answer a credit spend within ${waitMs} ms`;
      throw new CreditSpendFailed(message, true, { cause: new StoreUnreachable("PostgreSQL", message) });
    });
  }
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
