/**
 * The cluster mode's event writer: a node's verification events and rate-limit decisions go to
 * PostgreSQL's `analytics` schema, where every node adds to the same rows. A batch is one
 * transaction: the events in one INSERT (a column array each, unnested), then the minute, hour,
 * day and month rollups and the four totals, each an upsert of rows aggregated here (rollups.ts)
 * that adds to what other nodes wrote. So the rollups and totals always equal the events committed,
 * whichever nodes wrote them, and there is nothing to fold later.
 *
 * Two nodes adding to the same rows lock them in the same order (tables in one order, each
 * table's rows sorted by its primary key and inserted in that order), so they wait for each other
 * but never deadlock; a transaction PostgreSQL aborts anyway (deadlock, serialization failure) runs
 * again, a few times. Batches are written one at a time per node (but one given up after its
 * bound, `attempt`): a node's flush is one connection's work, and the pool stays for the requests.
 * A held batch (`hold`) waits here and is written with the next batch not held, in the same
 * transaction, as the worker thread of the embedded mode holds them.
 *
 * A COMMIT whose answer is lost (the connection breaks as PostgreSQL commits) is reported as a
 * failure: the sink keeps those events and writes them again, counting them twice; rarer and less
 * harmful than losing them.
 */
import type { SQL } from "bun";
import { PG_ANALYTICS, primaryKeySql, qualifiedName, type PgGranularity } from "../../storage/pg/analytics-tables.ts";
import { DEFAULT_DATABASE_TIMEOUT_MS } from "../../storage/pg/records/index.ts";
import { retryingLostRaces } from "../../storage/pg/retry.ts";
import { within } from "../../lib/within.ts";
import { unpackEvents, unpackRecords, type PackedEvents } from "./packed-events.ts";
import { aggregate, bucketStartMs, GRANULARITIES, totalsOf, type RollupRow, type TotalRow } from "./rollups.ts";
import type { DecisionRow, DecisionRowWriter } from "./ratelimit-decisions.ts";
import type { StoredEvent } from "./types.ts";
import { EventWriteError, type EventBatchWriter } from "./writers.ts";

/** Attempts of one flush whose transaction keeps losing races (docs/cluster.md says five). */
const WRITE_ATTEMPTS = 5;

/** Held events at most: past this, held batches are written without waiting for one not held. */
const MAX_HELD_EVENTS = 50_000;

type Params = unknown[];

const ROLLUP_COLUMNS = ["time", "workspace_id", "key_space_id", "key_id", "identity_id", "external_id", "outcome", "tags", "count", "spent_credits", "latency_sum_ms", "latency_max_ms"];
const ROLLUP_TYPES = ["int8", "text", "text", "text", "text", "text", "text", "text", "int8", "int8", "float8", "float8"];
const TOTAL_COLUMNS = ["time", "workspace_id", "key_space_id", "outcome", "count", "spent_credits"];
const TOTAL_TYPES = ["int8", "text", "text", "text", "int8", "int8"];
const DECISION_COLUMNS = ["time", "workspace_id", "namespace_id", "passed", "blocked"];
const DECISION_TYPES = ["int8", "text", "text", "int8", "int8"];

/** `INSERT … SELECT FROM unnest(<one array per column>)`, in the arrays' order, adding to a row already there by `onConflict`. */
function unnestInsert(table: string, columns: readonly string[], types: readonly string[], onConflict: string): string {
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`).join(", ");
  const names = columns.map((c) => `"${c}"`).join(", ");
  return `INSERT INTO ${table} AS t (${names})
    SELECT ${columns.map((c) => `u."${c}"`).join(", ")} FROM unnest(${arrays}) WITH ORDINALITY AS u(${names}, ord) ORDER BY u.ord
    ${onConflict}`;
}

const INSERT_EVENTS = (() => {
  const columns = ["request_id", "time", "workspace_id", "key_space_id", "key_id", "identity_id", "external_id", "outcome", "tags", "spent_credits", "latency_ms"];
  const types = ["text", "int8", "text", "text", "text", "text", "text", "text", "text", "int8", "float8"];
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`).join(", ");
  return `INSERT INTO ${qualifiedName(PG_ANALYTICS.events)} (${columns.map((c) => `"${c}"`).join(", ")}) SELECT * FROM unnest(${arrays})`;
})();

const perGranularity = (make: (g: PgGranularity) => string) => Object.fromEntries(GRANULARITIES.map((g) => [g, make(g)])) as Record<PgGranularity, string>;

const UPSERT_ROLLUP = perGranularity((g) => unnestInsert(qualifiedName(PG_ANALYTICS.rollups[g]), ROLLUP_COLUMNS, ROLLUP_TYPES,
  `ON CONFLICT (${primaryKeySql(PG_ANALYTICS.rollups[g])}) DO UPDATE SET "count" = t."count" + excluded."count",
     spent_credits = t.spent_credits + excluded.spent_credits, latency_sum_ms = t.latency_sum_ms + excluded.latency_sum_ms,
     latency_max_ms = greatest(t.latency_max_ms, excluded.latency_max_ms)`));

const UPSERT_TOTAL = perGranularity((g) => unnestInsert(qualifiedName(PG_ANALYTICS.totals[g]), TOTAL_COLUMNS, TOTAL_TYPES,
  `ON CONFLICT (${primaryKeySql(PG_ANALYTICS.totals[g])}) DO UPDATE SET "count" = t."count" + excluded."count", spent_credits = t.spent_credits + excluded.spent_credits`));

const UPSERT_DECISIONS = perGranularity((g) => unnestInsert(qualifiedName(PG_ANALYTICS.decisions[g]), DECISION_COLUMNS, DECISION_TYPES,
  `ON CONFLICT (${primaryKeySql(PG_ANALYTICS.decisions[g])}) DO UPDATE SET passed = t.passed + excluded.passed, blocked = t.blocked + excluded.blocked`));

/** Compares by each of `keys` in turn: the order rows are upserted in, the same on every node. */
function byKeys<T>(...keys: Array<(row: T) => string | number>): (a: T, b: T) => number {
  return (a, b) => {
    for (const key of keys) {
      const x = key(a), y = key(b);
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
}

const rollupOrder = byKeys<RollupRow>((r) => r.workspaceId, (r) => r.time, (r) => r.keySpaceId, (r) => r.keyId, (r) => r.identityId, (r) => r.outcome, (r) => r.tags);
const totalOrder = byKeys<TotalRow>((r) => r.workspaceId, (r) => r.time, (r) => r.keySpaceId, (r) => r.outcome);
const decisionOrder = byKeys<DecisionRow>((r) => r.workspaceId, (r) => r.minuteMs, (r) => r.namespaceId);

/** One array per column, in the order of `fields`. */
function columnsOf<T>(rows: readonly T[], fields: Array<(row: T) => unknown>): Params {
  return fields.map((field) => rows.map(field));
}

const rollupParams = (rows: RollupRow[]) => columnsOf(rows.sort(rollupOrder), [
  (r) => r.time, (r) => r.workspaceId, (r) => r.keySpaceId, (r) => r.keyId, (r) => r.identityId, (r) => r.externalId, (r) => r.outcome, (r) => r.tags,
  (r) => r.count, (r) => r.spentCredits, (r) => r.latencySumMs, (r) => r.latencyMaxMs,
]);
const totalParams = (rows: TotalRow[]) => columnsOf(rows.sort(totalOrder), [(r) => r.time, (r) => r.workspaceId, (r) => r.keySpaceId, (r) => r.outcome, (r) => r.count, (r) => r.spentCredits]);

/** The statements that write `events` with their rollups and totals, built before the transaction. */
function eventStatements(events: readonly StoredEvent[]): Array<[string, Params]> {
  const statements: Array<[string, Params]> = [[INSERT_EVENTS, columnsOf(events, [
    (e) => e.requestId, (e) => e.timeMs, (e) => e.workspaceId, (e) => e.keySpaceId, (e) => e.keyId, (e) => e.identityId,
    (e) => e.externalId, (e) => e.outcome, (e) => e.tags, (e) => e.spentCredits, (e) => e.latencyMs,
  ])]];
  const minutes = aggregate(events, "minute");
  for (const g of GRANULARITIES) statements.push([UPSERT_ROLLUP[g], rollupParams(g === "minute" ? minutes : aggregate(events, g))]);
  // The coarser totals from the minute totals, a handful of rows, as the embedded writer sums them.
  const minuteTotals = totalsOf(minutes);
  for (const g of GRANULARITIES) statements.push([UPSERT_TOTAL[g], totalParams(g === "minute" ? minuteTotals : totalsOf(minuteTotals, g))]);
  return statements;
}

/** The statements that add `rows` to each granularity's decisions, the rows of one bucket summed first (an upsert may touch a row once). */
function decisionStatements(rows: readonly DecisionRow[]): Array<[string, Params]> {
  return GRANULARITIES.map((g) => {
    const buckets = new Map<string, DecisionRow>();
    for (const r of rows) {
      const minuteMs = bucketStartMs(g, r.minuteMs);
      const key = `${minuteMs}\u0000${r.workspaceId}\u0000${r.namespaceId}`;
      const bucket = buckets.get(key);
      if (bucket) {
        bucket.passed += r.passed;
        bucket.blocked += r.blocked;
      } else buckets.set(key, { ...r, minuteMs });
    }
    const sorted = [...buckets.values()].sort(decisionOrder);
    return [UPSERT_DECISIONS[g], columnsOf(sorted, [(r) => r.minuteMs, (r) => r.workspaceId, (r) => r.namespaceId, (r) => r.passed, (r) => r.blocked])];
  });
}

interface HeldBatch {
  packed: PackedEvents;
  events: StoredEvent[];
  resolve(): void;
  reject(error: EventWriteError): void;
}

export class PgEventWriter implements EventBatchWriter, DecisionRowWriter {
  private held: HeldBatch[] = [];
  private heldEvents = 0;
  /** Settles once every write queued so far has; never rejects. */
  private queue: Promise<void> = Promise.resolve();

  /**
   * `sql`: the node's client; the writer runs one transaction on it at a time and never closes it.
   * `timeoutMs`: how long a transaction may wait for PostgreSQL (TOLLGATE_DATABASE_TIMEOUT_MS).
   */
  constructor(private readonly sql: SQL, private readonly opts: { attempts?: number; timeoutMs?: number } = {}) {}

  /** Resolves once the batch (and the held ones written with it) is committed; rejects naming every event of the batch. */
  write(events: PackedEvents, opts: { hold?: boolean } = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      const batch = { packed: events, events: unpackEvents(events), resolve, reject };
      this.held.push(batch);
      this.heldEvents += batch.events.length;
      if (!opts.hold || this.heldEvents >= MAX_HELD_EVENTS) this.writeHeld();
    });
  }

  /** Adds `rows` to the four decisions tables in one transaction, or rejects having added none. */
  writeRatelimitDecisions(rows: readonly DecisionRow[]): Promise<void> {
    const statements = decisionStatements(rows);
    return this.enqueue(() => (rows.length === 0 ? Promise.resolve() : this.transaction(statements)));
  }

  /** Writes what is still held, and resolves once every write has settled. */
  async close(): Promise<void> {
    if (this.held.length > 0) this.writeHeld();
    await this.queue;
  }

  private writeHeld(): void {
    const batches = this.held;
    this.held = [];
    this.heldEvents = 0;
    const events = batches.length === 1 ? batches[0]!.events : batches.flatMap((b) => b.events);
    this.enqueue(() => (events.length === 0 ? Promise.resolve() : this.transaction(eventStatements(events)))).then(
      () => { for (const b of batches) b.resolve(); },
      (error: unknown) => {
        const message = `verification events not written to PostgreSQL: ${(error as Error).message}`;
        for (const b of batches) b.reject(new EventWriteError(message, unpackRecords(b.packed)));
      },
    );
  }

  /** Runs `write` after every write queued before it. */
  private enqueue(write: () => Promise<void>): Promise<void> {
    const done = this.queue.then(write);
    this.queue = done.then(() => undefined, () => undefined);
    return done;
  }

  /** Runs `statements` in one transaction, again from the start when PostgreSQL aborts it for racing another. */
  private transaction(statements: ReadonlyArray<[string, Params]>): Promise<void> {
    return retryingLostRaces(() => this.attempt(statements), { attempts: this.opts.attempts ?? WRITE_ATTEMPTS });
  }

  /**
   * One transaction, given up after `timeoutMs`: a PostgreSQL that hangs without closing its
   * connections (Bun's client bounds no query) would hold every later flush. The transaction given
   * up sends nothing more once its server answers again and rolls back, so its events (given back
   * to the sink) are not written twice, unless its COMMIT was already sent.
   */
  private attempt(statements: ReadonlyArray<[string, Params]>): Promise<void> {
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    let givenUp = false;
    const work = this.sql.begin(async (tx) => {
      for (const [text, params] of statements) {
        if (givenUp) throw new Error("given up: PostgreSQL answered too late");
        await tx.unsafe(text, params);
      }
      if (givenUp) throw new Error("given up: PostgreSQL answered too late");
    });
    return within(work, timeoutMs, () => {
      givenUp = true;
      throw new Error(`PostgreSQL did not answer within ${timeoutMs} ms`);
    });
  }
}
