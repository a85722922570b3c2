/**
 * The statements that decide credit spends in PostgreSQL (see pg-spender.ts): the one for a batch,
 * its parameters built from the spends and its rows read back into one result per spend, and the
 * short way for a lone spend.
 * A key's spends travel as runs of equal cost (`[cost, count]`), decided a run per step: first come
 * first served grants a run's first min(count, balance / cost) spends and denies the rest, so a hot
 * key's hundreds of spends of cost 1 are one step, not hundreds of steps each carrying the batch.
 */

/** What one spend came to. `remaining` is the balance after it (after nothing, when denied). */
export type SpendResult =
  | { outcome: "granted"; remaining: number }
  | { outcome: "denied"; remaining: number }
  /** The key has no limit: granted, nothing written. */
  | { outcome: "unlimited" }
  /** No such key, or it is deleted: nothing spent. */
  | { outcome: "missing" };

/** How the statement decided a key: from its locked row, from its snapshot (no write), or not at all. */
type KeyMode = "charge" | "read" | "unlimited" | "missing" | "retry";

/** The statement's rows: one per run of a decided key (`charge`, `read`), in order; one with nulls for any other key. */
interface DecidedRow {
  mode: KeyMode;
  /** How many of the run's spends were granted (int8 as text). */
  granted: string | null;
  /** The balance after the run (int8 as text). */
  balance: string | null;
}

/**
 * $1: the batch's keys (text[]), in the order of their first spend; $2: those of them charged
 * (a positive cost); $3: JSON, element i the runs `[cost, count]` of key i of $1 in the order they
 * came; $4: the statement's id, under which what it took is journaled (credit_spends) when it
 * took anything, so that a statement the node gave up on can be settled. `steps` walks each key's runs from its opening balance. The lock re-reads a row changed
 * since the statement's snapshot, and the UPDATE follows it to that same newest row.
 */
const SPEND_SQL = `
WITH RECURSIVE
wanted AS MATERIALIZED (
  SELECT k.key_id, k.n::int AS n,
    ARRAY(SELECT (r.run->>0)::int8 FROM jsonb_array_elements(k.runs) WITH ORDINALITY AS r(run, i) ORDER BY r.i) AS costs,
    ARRAY(SELECT (r.run->>1)::int8 FROM jsonb_array_elements(k.runs) WITH ORDINALITY AS r(run, i) ORDER BY r.i) AS counts
  FROM ROWS FROM (unnest($1::text[]), jsonb_array_elements($3::text::jsonb)) WITH ORDINALITY AS k(key_id, runs, n)
),
locked AS MATERIALIZED (
  SELECT id, remaining FROM keys
  WHERE id = ANY($2::text[]) AND deleted_at IS NULL AND remaining IS NOT NULL
  ORDER BY id FOR NO KEY UPDATE
),
seen AS MATERIALIZED (
  SELECT id, remaining FROM keys WHERE id = ANY($1::text[]) AND deleted_at IS NULL
),
opening AS MATERIALIZED (
  SELECT w.n, w.key_id, w.costs, w.counts, coalesce(l.remaining, s.remaining) AS balance,
    CASE WHEN l.id IS NOT NULL THEN 'charge'
      WHEN s.id IS NULL THEN 'missing'
      WHEN s.remaining IS NULL THEN 'unlimited'
      WHEN w.key_id = ANY($2::text[]) THEN 'retry'
      ELSE 'read' END AS mode
  FROM wanted w LEFT JOIN locked l ON l.id = w.key_id LEFT JOIN seen s ON s.id = w.key_id
),
steps (n, costs, counts, run, granted, balance) AS (
  SELECT n, costs, counts, 0, 0::int8, balance FROM opening WHERE mode IN ('charge', 'read')
  UNION ALL
  SELECT p.n, p.costs, p.counts, p.run + 1, g.granted, p.balance - g.granted * p.costs[p.run + 1]
  FROM steps p, LATERAL (SELECT CASE
      WHEN p.costs[p.run + 1] = 0 THEN CASE WHEN p.balance >= 0 THEN p.counts[p.run + 1] ELSE 0 END
      ELSE greatest(0, least(p.counts[p.run + 1], p.balance / p.costs[p.run + 1])) END AS granted) g
  WHERE p.run < cardinality(p.costs)
),
written AS (
  UPDATE keys SET remaining = closing.balance
  FROM (SELECT DISTINCT ON (n) n, balance FROM steps ORDER BY n, run DESC) closing
    JOIN opening o ON o.n = closing.n
  WHERE keys.id = o.key_id AND o.mode = 'charge' AND closing.balance <> o.balance
  RETURNING keys.id, o.balance - closing.balance AS spent
),
journal AS (
  INSERT INTO credit_spends (id, charges)
  SELECT $4::text, jsonb_object_agg(id, spent)::text FROM written HAVING count(*) > 0
)
SELECT o.mode, st.granted, st.balance
FROM opening o LEFT JOIN steps st ON st.n = o.n AND st.run > 0
ORDER BY o.n, st.run`;

/**
 * The short way for a batch of one spend of positive cost: one conditional decrement, $1 the key, $2
 * the cost, $3 the statement's id (journaled with the charge). A row back means granted (the condition held on the newest row, under its lock); none
 * means anything else (denied, unlimited, missing), which SPEND_SQL then tells apart.
 */
export const GRANT_ONE_SQL = `
WITH granted AS (
  UPDATE keys SET remaining = remaining - $2
  WHERE id = $1 AND deleted_at IS NULL AND remaining >= $2
  RETURNING remaining
),
journal AS (
  INSERT INTO credit_spends (id, charges) SELECT $3::text, jsonb_build_object($1::text, $2::int8)::text FROM granted
)
SELECT remaining FROM granted`;

interface Run<T> {
  cost: number;
  spends: T[];
}

/** A batch's spends grouped by key and cut into runs of equal cost, first come first: what the statement takes. */
export class SpendBatch<T extends { keyId: string; cost: number }> {
  /** Per key, in the order of its first spend: its runs in the order they came. */
  private readonly runsByKey = new Map<string, Run<T>[]>();

  constructor(spends: readonly T[]) {
    for (const s of spends) {
      let runs = this.runsByKey.get(s.keyId);
      if (runs === undefined) this.runsByKey.set(s.keyId, (runs = []));
      const last = runs.at(-1);
      if (last?.cost === s.cost) last.spends.push(s);
      else runs.push({ cost: s.cost, spends: [s] });
    }
  }

  /** The statement and its parameters; `id` journals what it takes. */
  statement(id: string): [string, unknown[]] {
    const keyIds = [...this.runsByKey.keys()];
    const charged = keyIds.filter((id) => this.runsByKey.get(id)!.some((run) => run.cost > 0));
    const runs = keyIds.map((id) => this.runsByKey.get(id)!.map((run) => [run.cost, run.spends.length]));
    return [SPEND_SQL, [keyIds, charged, JSON.stringify(runs), id]];
  }

  /** Each spend's result, or `undefined` where its key is to be decided again by the next statement. */
  results(rows: readonly DecidedRow[]): Map<T, SpendResult | undefined> {
    const out = new Map<T, SpendResult | undefined>();
    let row = 0;
    for (const runs of this.runsByKey.values()) {
      const mode = rows[row]!.mode;
      if (mode === "charge" || mode === "read") {
        for (const run of runs) settleRun(run, rows[row++]!, out);
      } else {
        row++;
        const result: SpendResult | undefined = mode === "retry" ? undefined : { outcome: mode };
        for (const run of runs) for (const s of run.spends) out.set(s, result);
      }
    }
    return out;
  }
}

/** The run's first `granted` spends are granted, each leaving `cost` less; the rest are denied at the balance after the run. */
function settleRun<T>(run: Run<T>, row: DecidedRow, out: Map<T, SpendResult | undefined>): void {
  const granted = Number(row.granted);
  const after = Number(row.balance);
  run.spends.forEach((s, i) => {
    out.set(s, i < granted ? { outcome: "granted", remaining: after + (granted - 1 - i) * run.cost } : { outcome: "denied", remaining: after });
  });
}
