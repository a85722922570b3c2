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
 *
 * A spend waits at most 2 × timeoutMs from the moment it is asked for, whatever is in flight
 * before it (one still queued then is dropped: nothing sent, nothing spent). A statement given up
 * on, or whose connection broke, may still commit once the server answers: it is answered as a
 * failure and settled by its id (pg-spend-settler.ts), cancelled or refunded, so that the credits
 * taken always equal the spends answered granted.
 */
import { SQL } from "bun";
import { within } from "../../lib/within.ts";
import { StoreUnreachable } from "../../storage/unreachable.ts";
import { GRANT_ONE_SQL, SpendBatch, type SpendResult } from "./pg-spend-batch.ts";
import { SpendSettler, type SettlerStats } from "./pg-spend-settler.ts";

export type { SpendResult };

/**
 * A spend that got no answer from PostgreSQL. `mayHaveCharged` is false when the statement
 * certainly did not commit (PostgreSQL refused or cancelled it), true when its fate is unknown (the
 * connection broke or no answer came in time): then the credits may have been taken for a moment,
 * never granted, and the settler gives them back.
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
  /** PostgreSQL cancels a spend statement after this long (nothing charged); a spend is given up on twice this after it was asked for. */
  timeoutMs?: number;
  /** Connections in the pool: one carries the statement in flight, another takes over if that one hangs (the settler has one more). */
  poolSize?: number;
  /** Spends per statement at most; more wait for the next one. */
  maxBatch?: number;
}

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_POOL_SIZE = 2;
const DEFAULT_MAX_BATCH = 1000;

/** Prune the journal's old rows at most this often (each node; a prune is one short statement). */
const PRUNE_EVERY_MS = 10 * 60_000;

interface QueuedSpend {
  keyId: string;
  cost: number;
  /** performance.now() when it was asked for: its deadline is 2 × timeoutMs later. */
  askedMs: number;
  resolve(result: SpendResult): void;
  reject(error: unknown): void;
}

/** One batch on its way: the ids of the statements it sent, and whether it was given up on (then it sends no more). */
interface Sending {
  ids: string[];
  abandoned: boolean;
}

export class PgCreditSpender {
  private readonly sql: SQL;
  private readonly settler: SpendSettler;
  private readonly timeoutMs: number;
  private prunedMs = -Infinity;
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
    this.settler = new SpendSettler(options.url, 2 * this.timeoutMs);
  }

  /** The statements given up on and how they were settled (for /metrics). */
  settlement(): SettlerStats {
    return this.settler.stats();
  }

  /**
   * Spends `cost` (a non-negative integer) of the key's credits if its balance covers it, deciding
   * in PostgreSQL; resolves after the decision is committed. Cost 0 reports the balance. Rejects
   * with CreditSpendFailed when PostgreSQL gives no answer within 2 × timeoutMs of this call
   * (whatever was in flight before it); whatever its statement took is then given back.
   */
  spend(keyId: string, cost: number): Promise<SpendResult> {
    if (!Number.isSafeInteger(cost) || cost < 0) return Promise.reject(new RangeError(`cost must be a non-negative integer, not ${cost}`));
    if (this.closed) return Promise.reject(new CreditSpendFailed("The credit spender is closed; nothing was spent", false));
    return new Promise((resolve, reject) => {
      this.queue.push({ keyId, cost, askedMs: performance.now(), resolve, reject });
      this.schedule();
    });
  }

  /** Rejects the spends not sent yet (nothing spent), waits for the statement in flight, settles what it can, and closes. */
  async close(): Promise<void> {
    this.closed = true;
    const unsent = this.queue;
    this.queue = [];
    for (const s of unsent) s.reject(new CreditSpendFailed("The credit spender was closed before this spend was sent; nothing was spent", false));
    await this.sql.close({ timeout: 2 * this.timeoutMs / 1000 });
    await this.settler.close();
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
    const deadlineMs = 2 * this.timeoutMs;
    const nowMs = performance.now();
    // Past its deadline before it was sent: nothing was spent.
    const late = this.queue.filter((s) => nowMs - s.askedMs >= deadlineMs);
    if (late.length > 0) {
      this.queue = this.queue.filter((s) => nowMs - s.askedMs < deadlineMs);
      const failure = new CreditSpendFailed(`PostgreSQL did not take a credit spend within ${deadlineMs} ms; nothing was spent`, false, { cause: new StoreUnreachable("PostgreSQL", "credit spends wait") });
      for (const s of late) s.reject(failure);
    }
    const spends = this.queue.splice(0, this.maxBatch);
    if (spends.length === 0) return;
    this.inFlight = true;
    const sending: Sending = { ids: [], abandoned: false };
    const waitMs = Math.max(1, Math.min(...spends.map((s) => s.askedMs)) + deadlineMs - nowMs);
    try {
      const results = await within(this.decide(spends, sending), waitMs, () => {
        const message = `PostgreSQL did not answer a credit spend within ${deadlineMs} ms`;
        throw new CreditSpendFailed(message, true, { cause: new StoreUnreachable("PostgreSQL", message) });
      });
      for (const s of spends) {
        const result = results.get(s);
        if (result !== undefined) s.resolve(result);
      }
      this.queue.unshift(...spends.filter((s) => results.get(s) === undefined));
      this.pruneNowAndThen();
    } catch (error) {
      sending.abandoned = true;
      // Whatever was sent may still commit (or did): settle each statement by its id.
      for (const id of sending.ids) this.settler.settle(id);
      const failure = asSpendFailure(error, this.timeoutMs);
      for (const s of spends) s.reject(failure);
    } finally {
      this.inFlight = false;
      this.schedule();
    }
  }

  /** Each spend's result; `undefined` for spends to decide again. A lone spend tries the short way first. */
  private async decide(spends: QueuedSpend[], sending: Sending): Promise<Map<QueuedSpend, SpendResult | undefined>> {
    const only = spends.length === 1 ? spends[0]! : undefined;
    if (only !== undefined && only.cost > 0) {
      const [granted] = await this.send<Array<{ remaining: string }>>(sending, (id) => this.sql.unsafe(GRANT_ONE_SQL, [only.keyId, only.cost, id]));
      if (granted !== undefined) return new Map([[only, { outcome: "granted", remaining: Number(granted.remaining) }]]);
    }
    const batch = new SpendBatch(spends);
    return batch.results(await this.send(sending, (id) => {
      const [statement, parameters] = batch.statement(id);
      return this.sql.unsafe(statement, parameters);
    }));
  }

  /** Sends one statement under a new id, unless its batch was given up on meanwhile (then nothing more is sent). */
  private send<T>(sending: Sending, statement: (id: string) => Promise<T>): Promise<T> {
    if (sending.abandoned) return Promise.reject(new CreditSpendFailed("The batch was given up on; nothing more was sent", false));
    const id = crypto.randomUUID();
    sending.ids.push(id);
    return statement(id);
  }

  private pruneNowAndThen(): void {
    const nowMs = performance.now();
    if (nowMs - this.prunedMs < PRUNE_EVERY_MS) return;
    this.prunedMs = nowMs;
    this.settler.prune();
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
  // Either way the request is answered service_unavailable naming PostgreSQL, never unexpected_error.
  const away = (message: string) => ({ cause: new StoreUnreachable("PostgreSQL", message, { cause: error }) });
  if (code === "ERR_POSTGRES_SERVER_ERROR") {
    const detail = sqlState === "57014" ? `it ran past ${timeoutMs} ms and was cancelled` : `PostgreSQL refused it (${String(sqlState)})`;
    return new CreditSpendFailed(`No credits were spent: ${detail}`, false, away(detail));
  }
  return new CreditSpendFailed(`A credit spend got no answer from PostgreSQL; it may have been charged`, true, away("no answer"));
}
