/**
 * No analytics table shows another workspace's rows. Two workspaces verify keys of their own
 * (recorded by keys.verifyKey, written by the real pipeline); then, for every public table, each
 * workspace's root key sees exactly its own verifications, counts and ids, through plain reads,
 * joins, subqueries, CTEs, EXISTS and UNION ALL, and a root key holding only
 * `api.<apiId>.read_analytics` sees only that API's key space. A rollup's plain SUM(count) reads
 * its totals table and a GROUP BY key_id the rollup itself, so both physical tables of every rollup
 * are covered: dropping any one table's workspace filter fails this file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { TEST_ACTOR, createApi, createKey } from "../../../support/contract.ts";
import { ALL_GRANTS } from "../../../../src/services/auth/index.ts";
import { PUBLIC_TABLES } from "../../../../src/services/analytics/query/tables.ts";
import { keySpaceOf, runQuery } from "./support.ts";
import { flushAnalytics } from "./store.ts";

interface Sight {
  /** Verifications it must count. */
  count: number;
  keyIds: string[];
  keySpaceIds: string[];
  workspaceIds: string[];
}

interface Viewer {
  rootKey: string;
  sees: Sight;
}

const VIEWERS = ["workspace default", "workspace other", "an api.<apiId>.read_analytics key of default"] as const;

let h: Harness;
const viewers = new Map<(typeof VIEWERS)[number], Viewer>();
/** Every id of both workspaces: what a viewer sees must be its own, and nothing else of these. */
let allIds: string[] = [];

async function verifyTimes(key: string, times: number, rootKey?: string): Promise<void> {
  for (let i = 0; i < times; i++) {
    const res = await h.post("/v2/keys.verifyKey", { key }, rootKey === undefined ? {} : { key: rootKey });
    expect(res.body.data.valid).toBe(true);
  }
}

beforeAll(async () => {
  h = await startHarness();
  const ws = h.running.services.workspaces;
  const wsA = (await ws.setAnalytics("default", true, TEST_ACTOR)).id;
  const wsB = (await ws.create({ name: "other", analyticsEnabled: true }, TEST_ACTOR)).id;
  const keyB = await h.rootKeyWith([...ALL_GRANTS], "other");

  // default: 5 verifications in api1 (3 + 2), 4 in api2. other: 6 + 1 in its own API.
  const [api1, api2, apiB] = [await createApi(h, "leak-1"), await createApi(h, "leak-2"), await createApi(h, "leak-b", keyB)];
  const [a1, a2, a3] = [await createKey(h, { apiId: api1 }), await createKey(h, { apiId: api1 }), await createKey(h, { apiId: api2 })];
  const [b1, b2] = [await createKey(h, { apiId: apiB }, keyB), await createKey(h, { apiId: apiB }, keyB)];
  await verifyTimes(a1.key, 3);
  await verifyTimes(a2.key, 2);
  await verifyTimes(a3.key, 4);
  await verifyTimes(b1.key, 6, keyB);
  await verifyTimes(b2.key, 1, keyB);
  await flushAnalytics(h);

  const [ks1, ks2, ksB] = [await keySpaceOf(h, api1), await keySpaceOf(h, api2), await keySpaceOf(h, apiB)];
  const sorted = (ids: string[]) => [...ids].sort();
  viewers.set(VIEWERS[0], { rootKey: h.rootKey, sees: { count: 9, keyIds: sorted([a1.keyId, a2.keyId, a3.keyId]), keySpaceIds: sorted([ks1, ks2]), workspaceIds: [wsA] } });
  viewers.set(VIEWERS[1], { rootKey: keyB, sees: { count: 7, keyIds: sorted([b1.keyId, b2.keyId]), keySpaceIds: [ksB], workspaceIds: [wsB] } });
  viewers.set(VIEWERS[2], {
    rootKey: await h.rootKeyWith([`api.${api1}.read_analytics`]),
    sees: { count: 5, keyIds: sorted([a1.keyId, a2.keyId]), keySpaceIds: [ks1], workspaceIds: [wsA] },
  });
  allIds = [wsA, wsB, ks1, ks2, ksB, a1.keyId, a2.keyId, a3.keyId, b1.keyId, b2.keyId];
});
afterAll(async () => { await h.stop(); });

/** The rows of `query` for `viewer`; none of them may name an id the viewer does not own. */
async function rowsFor(viewer: Viewer, query: string): Promise<Array<Record<string, unknown>>> {
  const res = await runQuery(h, query, viewer.rootKey);
  if (res.status !== 200) throw new Error(`${query}\n→ ${res.status}: ${JSON.stringify(res.body)}`);
  const text = JSON.stringify(res.body.data);
  const own = new Set([...viewer.sees.keyIds, ...viewer.sees.keySpaceIds, ...viewer.sees.workspaceIds]);
  const foreign = allIds.filter((id) => !own.has(id) && text.includes(id));
  if (foreign.length > 0) throw new Error(`saw ${foreign.join(", ")} through\n${query}`);
  return res.body.data;
}

const column = (rows: Array<Record<string, unknown>>, name: string) => rows.map((r) => r[name]);
const distinctSorted = (values: unknown[]) => [...new Set(values)].sort();

/** The key verification tables (the rate-limit ones: ratelimits.test.ts). */
const TABLES = [...PUBLIC_TABLES.values()].filter((t) => t.family === "verifications").map((t) => t.name);

describe("200: each table shows a root key its own workspace's (or API's) rows, and only those", () => {
  test("the key verification tables are the five public ones of upstream", () => {
    expect(TABLES.sort()).toEqual([
      "key_verifications_per_day_v1", "key_verifications_per_hour_v1", "key_verifications_per_minute_v1", "key_verifications_per_month_v1", "key_verifications_v1",
    ]);
  });

  for (const table of TABLES) {
    // The raw table has a row per verification; a rollup a row per bucket and key with its count.
    const total = table === "key_verifications_v1" ? "count()" : "SUM(count)";
    for (const name of VIEWERS) {
      test(`${table}: ${name}`, async () => {
        const viewer = viewers.get(name)!;
        const { count, keyIds, keySpaceIds, workspaceIds } = viewer.sees;
        const rows = (query: string) => rowsFor(viewer, query);
        const n = async (query: string) => (await rows(query))[0]!.n;

        expect(await n(`SELECT ${total} AS n FROM ${table}`)).toBe(count);
        expect(column(await rows(`SELECT DISTINCT key_id FROM ${table} ORDER BY key_id`), "key_id")).toEqual(keyIds);
        expect(column(await rows(`SELECT DISTINCT key_space_id FROM ${table} ORDER BY key_space_id`), "key_space_id")).toEqual(keySpaceIds);
        expect(column(await rows(`SELECT DISTINCT workspace_id FROM ${table}`), "workspace_id")).toEqual(workspaceIds);
        expect(await n(`SELECT SUM(k) AS n FROM (SELECT ${total} AS k FROM ${table} GROUP BY key_id)`)).toBe(count);
        // Filters that name everything else select nothing.
        expect(await n(`SELECT count() AS n FROM ${table} WHERE workspace_id NOT IN ('${workspaceIds.join("', '")}') OR key_space_id NOT IN ('${keySpaceIds.join("', '")}')`)).toBe(0);
        // Joins: with itself, and with the raw table (whose own filter must not stand in for this one's).
        expect(column(await rows(`SELECT DISTINCT a.key_id AS k FROM ${table} AS a JOIN ${table} AS b ON a.key_id = b.key_id ORDER BY k`), "k")).toEqual(keyIds);
        expect(column(await rows(`SELECT DISTINCT t.key_id AS k FROM ${table} AS t LEFT JOIN key_verifications_v1 AS r ON r.key_id = t.key_id ORDER BY k`), "k")).toEqual(keyIds);
        expect(column(await rows(`SELECT DISTINCT r.key_id AS k FROM key_verifications_v1 AS r CROSS JOIN ${table} AS t ORDER BY k`), "k")).toEqual(keyIds);
        expect(await n(`SELECT count() AS n FROM ${table} AS a WHERE EXISTS (SELECT 1 FROM ${table} AS b WHERE b.workspace_id <> a.workspace_id)`)).toBe(0);
        // Subqueries, CTEs and UNION ALL.
        expect(column(await rows(`SELECT DISTINCT key_id FROM ${table} WHERE key_id IN (SELECT key_id FROM ${table}) ORDER BY key_id`), "key_id")).toEqual(keyIds);
        expect(await n(`SELECT (SELECT ${total} FROM ${table}) AS n FROM ${table} LIMIT 1`)).toBe(count);
        expect(await n(`WITH t AS (SELECT * FROM ${table}) SELECT ${total} AS n FROM t`)).toBe(count);
        expect(await n(`WITH t AS (SELECT key_id, workspace_id FROM ${table}) SELECT count() AS n FROM t WHERE workspace_id <> '${workspaceIds[0]}'`)).toBe(0);
        expect(distinctSorted(column(await rows(`SELECT key_id FROM ${table} UNION ALL SELECT key_id FROM key_verifications_v1`), "key_id"))).toEqual(keyIds);
        expect(await n(`SELECT SUM(n) AS n FROM (SELECT ${total} AS n FROM ${table} UNION ALL SELECT ${total} AS n FROM ${table})`)).toBe(2 * count);
      });
    }
  }
});
