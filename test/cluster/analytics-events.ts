/**
 * Verification events for the cluster's analytics tests: a deterministic spread over a few keys,
 * identities, outcomes and tag sets of two workspaces, across an hour, a day and a month boundary,
 * with latencies in quarters of a millisecond (sums in any order are exact). And the rows each
 * analytics table should hold for them, read back from PostgreSQL in the same shape.
 */
import type { SQL } from "bun";
import { EventPacker, type PackedEvents } from "../../src/services/analytics/packed-events.ts";
import { aggregate, GRANULARITIES, totalsOf, type Granularity, type RollupRow, type TotalRow } from "../../src/services/analytics/rollups.ts";
import { storedTags, type StoredEvent, type VerificationEvent } from "../../src/services/analytics/types.ts";

/** 23:30 UTC on the last day of January: events spread over two hours cross an hour, a day and a month. */
export const BASE_MS = Date.UTC(2026, 0, 31, 23, 30);

const KEYS = [
  { workspaceId: "ws_a", keySpaceId: "ks_1", keyId: "key_1", identityId: "id_1", externalId: "user_1" },
  { workspaceId: "ws_a", keySpaceId: "ks_1", keyId: "key_2", identityId: "", externalId: "" },
  { workspaceId: "ws_a", keySpaceId: "ks_2", keyId: "key_3", identityId: "id_2", externalId: "Zoë 🚀" },
  { workspaceId: "ws_b", keySpaceId: "ks_3", keyId: "key_4", identityId: "", externalId: "" },
];
const OUTCOMES = ["VALID", "RATE_LIMITED", "USAGE_EXCEEDED"];
/** Tag sets are stored as JSON text: a NUL or a lone surrogate in a tag is escaped there, which PostgreSQL's text takes. */
const TAGS = [[], ["env:prod"], ["b", "a"], ["nul\u0000", "\ud800"]];

/** `count` events, the `seed`th sequence of them: the same arguments give the same events. */
export function makeEvents(count: number, seed = 0, spreadMs = 2 * 3_600_000): VerificationEvent[] {
  let state = (seed * 7919 + 17) >>> 0;
  const next = (n: number) => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 8) % n;
  };
  return Array.from({ length: count }, (_, i) => ({
    ...KEYS[next(KEYS.length)]!,
    timeMs: BASE_MS + next(spreadMs),
    outcome: OUTCOMES[next(OUTCOMES.length)]!,
    tags: TAGS[next(TAGS.length)]!,
    spentCredits: next(4),
    latencyMs: next(400) / 4,
    requestId: `req_${seed}_${i}`,
  }));
}

export function pack(events: readonly VerificationEvent[]): PackedEvents {
  const packer = new EventPacker();
  for (const e of events) packer.add(e);
  return packer.take();
}

export const stored = (events: readonly VerificationEvent[]): StoredEvent[] =>
  events.map((e) => ({ ...e, requestId: e.requestId ?? "", tags: storedTags(e.tags) }));

const rollupKey = (r: { [K in keyof RollupRow]: unknown }) => JSON.stringify([r.time, r.workspaceId, r.keySpaceId, r.keyId, r.identityId, r.externalId, r.outcome, r.tags, r.count, r.spentCredits, r.latencySumMs, r.latencyMaxMs]);
const totalKey = (r: { [K in keyof TotalRow]: unknown }) => JSON.stringify([r.time, r.workspaceId, r.keySpaceId, r.outcome, r.count, r.spentCredits]);

/** What each table should hold for `events`, as sorted row keys. */
export function expectedTables(events: readonly VerificationEvent[]): Record<string, string[]> {
  const s = stored(events);
  const out: Record<string, string[]> = {};
  for (const g of GRANULARITIES) {
    const rows = aggregate(s, g);
    out[`verification_rollups_${g}`] = rows.map(rollupKey).sort();
    out[`verification_totals_${g}`] = totalsOf(rows).map(totalKey).sort();
  }
  return out;
}

/** What each rollup and totals table of the database holds, in expectedTables' shape. */
export async function actualTables(sql: SQL): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const g of GRANULARITIES as readonly Granularity[]) {
    const rollups = await sql.unsafe(`SELECT * FROM analytics.verification_rollups_${g}`);
    out[`verification_rollups_${g}`] = rollups.map((r: Record<string, unknown>) => rollupKey({
      time: Number(r.time), workspaceId: r.workspace_id, keySpaceId: r.key_space_id, keyId: r.key_id, identityId: r.identity_id, externalId: r.external_id,
      outcome: r.outcome, tags: r.tags, count: Number(r.count), spentCredits: Number(r.spent_credits), latencySumMs: r.latency_sum_ms, latencyMaxMs: r.latency_max_ms,
    })).sort();
    const totals = await sql.unsafe(`SELECT * FROM analytics.verification_totals_${g}`);
    out[`verification_totals_${g}`] = totals.map((r: Record<string, unknown>) => totalKey({
      time: Number(r.time), workspaceId: r.workspace_id, keySpaceId: r.key_space_id, outcome: r.outcome, count: Number(r.count), spentCredits: Number(r.spent_credits),
    })).sort();
  }
  return out;
}

/** The raw events table's rows, as StoredEvents sorted by request id. */
export async function actualEvents(sql: SQL): Promise<StoredEvent[]> {
  const rows = await sql`SELECT * FROM analytics.verification_events ORDER BY request_id COLLATE "C"`;
  return rows.map((r: Record<string, unknown>) => ({
    requestId: r.request_id, timeMs: Number(r.time), workspaceId: r.workspace_id, keySpaceId: r.key_space_id, keyId: r.key_id, identityId: r.identity_id,
    externalId: r.external_id, outcome: r.outcome, tags: r.tags, spentCredits: Number(r.spent_credits), latencyMs: r.latency_ms,
  }) as StoredEvent);
}

export const byRequestId = (events: StoredEvent[]) => [...events].sort((a, b) => (a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0));

/** `events` as a failed write gives them back: their tag sets sorted, as stored. */
export const asRecorded = (events: readonly VerificationEvent[]): VerificationEvent[] => events.map((e) => ({ ...e, tags: [...e.tags].sort() }));
