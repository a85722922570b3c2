/**
 * Rate-limit decisions written by the cluster's event writer (src/services/analytics/pg-writer.ts)
 * against a real PostgreSQL: each granularity's table holds every decision counted, in its bucket,
 * also when three nodes add to the same namespaces and minutes at once; a failed write adds
 * nothing anywhere, and the aggregator keeps the counts for its next flush. One server for the
 * file; a fresh database per test.
 */
import { describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import { bucketStartMs, GRANULARITIES, PgEventWriter, RatelimitDecisionAggregator, type DecisionRow } from "../../src/services/analytics/index.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { BASE_MS } from "./analytics-events.ts";
import { postgresForFile } from "./pg-database.ts";

/** `count` decisions over a few namespaces of two workspaces and two hours from BASE_MS (across a day and a month), the `seed`th sequence. */
function decisions(count: number, seed: number): Array<{ workspaceId: string; namespaceId: string; passed: boolean; timeMs: number }> {
  let state = (seed * 104_729 + 7) >>> 0;
  const next = (n: number) => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 8) % n;
  };
  const namespaces = [["ws_a", "ns_email"], ["ws_a", "ns_sms"], ["ws_b", "ns_login"]] as const;
  return Array.from({ length: count }, () => {
    const [workspaceId, namespaceId] = namespaces[next(namespaces.length)]!;
    return { workspaceId, namespaceId, passed: next(3) > 0, timeMs: BASE_MS + next(2 * 3_600_000) };
  });
}

/** Each granularity's expected rows, as sorted text. */
function expected(all: ReturnType<typeof decisions>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const g of GRANULARITIES) {
    const rows = new Map<string, { passed: number; blocked: number }>();
    for (const d of all) {
      const key = `${bucketStartMs(g, d.timeMs)}|${d.workspaceId}|${d.namespaceId}`;
      const row = rows.get(key) ?? { passed: 0, blocked: 0 };
      if (d.passed) row.passed++;
      else row.blocked++;
      rows.set(key, row);
    }
    out[g] = [...rows].map(([key, r]) => `${key}|${r.passed}|${r.blocked}`).sort();
  }
  return out;
}

async function actual(sql: SQL): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const g of GRANULARITIES) {
    const rows = await sql.unsafe(`SELECT "time"::text AS t, workspace_id, namespace_id, passed::text AS p, blocked::text AS b FROM analytics.ratelimit_decisions_${g}`);
    out[g] = rows.map((r: Record<string, string>) => `${r.t}|${r.workspace_id}|${r.namespace_id}|${r.p}|${r.b}`).sort();
  }
  return out;
}

/** An aggregator over `writer` that counted `all`. */
function counted(writer: PgEventWriter, all: ReturnType<typeof decisions>): RatelimitDecisionAggregator {
  const aggregator = new RatelimitDecisionAggregator({ writer });
  for (const d of all) aggregator.record(d.workspaceId, d.namespaceId, d.passed, d.timeMs);
  return aggregator;
}

describe.skipIf(skipWithout(missing.postgres(), "the cluster's rate-limit decisions"))("writing rate-limit decisions to PostgreSQL", () => {
  const pg = postgresForFile();

  test("one flush: every granularity's table counts every decision in its bucket", async () => {
    const sql = pg.client(await pg.freshDatabase());
    const all = decisions(3000, 1);
    const aggregator = counted(new PgEventWriter(sql), all);
    expect(await aggregator.flush()).toBeGreaterThan(3);
    expect(await actual(sql)).toEqual(expected(all));
  });

  test("three nodes flushing the same namespaces and minutes at once, several times: the sums are exact", async () => {
    const url = await pg.freshDatabase();
    const rounds = Array.from({ length: 3 }, (_, node) => Array.from({ length: 5 }, (_, round) => decisions(500, node * 10 + round)));
    await Promise.all(rounds.map(async (ofNode) => {
      // No second attempt: rows locked in one order never deadlock, and a deadlock must fail the test.
      const writer = new PgEventWriter(pg.client(url, 2), { attempts: 1 });
      await Promise.all(ofNode.map((round) => counted(writer, round).flush()));
    }));
    expect(await actual(pg.client(url))).toEqual(expected(rounds.flat(2)));
  });

  test("a failed write adds nothing to any table, and the aggregator writes the same counts with its next flush", async () => {
    const sql = pg.client(await pg.freshDatabase());
    await sql.unsafe(`ALTER TABLE analytics.ratelimit_decisions_month ADD CONSTRAINT refuse_all CHECK (false)`);
    const all = decisions(400, 2);
    const aggregator = counted(new PgEventWriter(sql), all);
    await expect(aggregator.flush()).rejects.toThrow(/refuse_all/);
    expect(await actual(sql)).toEqual({ minute: [], hour: [], day: [], month: [] });
    await sql.unsafe(`ALTER TABLE analytics.ratelimit_decisions_month DROP CONSTRAINT refuse_all`);
    await aggregator.flush();
    expect(await actual(sql)).toEqual(expected(all));
  });

  test("rows of one hour given in any order add up once per bucket", async () => {
    const sql = pg.client(await pg.freshDatabase());
    const rows: DecisionRow[] = [0, 5, 1, 4, 2, 3].map((m) => ({ workspaceId: "ws_a", namespaceId: "ns", minuteMs: BASE_MS + m * 60_000, passed: m, blocked: 1 }));
    await new PgEventWriter(sql).writeRatelimitDecisions(rows);
    const [hour] = await sql`SELECT passed::int AS p, blocked::int AS b FROM analytics.ratelimit_decisions_hour`;
    expect(hour).toEqual({ p: 15, b: 6 });
  });
});
