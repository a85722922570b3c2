/**
 * A root key whose analytics grants are scoped to APIs that resolve to nothing live (a deleted API,
 * an id that never existed) reads every public table as empty: a zero count, no rows, never another
 * API's or workspace's. And a WHERE that is plainly false (`0`, `false`) is an empty answer too, not
 * a 400: both once failed on the rollups whose minute branch is read through a partial index.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { createApi } from "../../../support/contract.ts";
import { PUBLIC_TABLES } from "../../../../src/services/analytics/query/tables.ts";
import { DAY, keySpaceOf, runQuery, seedWorld, startOfDay, type AnalyticsWorld, type Granularity } from "./support.ts";
import { insertEvents, insertRollups } from "./store.ts";

let h: Harness;
let w: AnalyticsWorld;
const viewers = new Map<string, string>();

beforeAll(async () => {
  h = await startHarness();
  w = await seedWorld(h);
  const doomed = await createApi(h, "analytics-doomed");
  const ksDoomed = await keySpaceOf(h, doomed);
  const yesterday = startOfDay(h.clock.now()) - DAY;
  // Rows in every rollup, for the live APIs and the doomed one, so an empty answer is not for want of rows.
  for (const granularity of ["minute", "hour", "day", "month"] as Granularity[]) {
    await insertRollups(h, granularity, [w.ks1, w.ks2, ksDoomed].map((keySpaceId) => ({ time: yesterday, workspaceId: w.wsA, keySpaceId, count: 3 })));
  }
  await insertEvents(h, [{ time: h.clock.now() - 500, workspaceId: w.wsA, keySpaceId: ksDoomed }]);
  const deleted = await h.post("/v2/apis.deleteApi", { apiId: doomed });
  expect(deleted.status).toBe(200);
  viewers.set("a deleted API", await h.rootKeyWith([`api.${doomed}.read_analytics`]));
  viewers.set("an API that never existed", await h.rootKeyWith(["api.api_neverexisted.read_analytics"]));
});
afterAll(async () => { await h.stop(); });

async function rows(query: string, key?: string): Promise<Array<Record<string, unknown>>> {
  const res = await runQuery(h, query, key);
  if (res.status !== 200) throw new Error(`${query}\n→ ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The key verification tables (the rate-limit ones: ratelimits.test.ts). */
const TABLES = [...PUBLIC_TABLES.values()].filter((t) => t.family === "verifications").map((t) => t.name);

describe("200: API-scoped grants that resolve to no live API read every table as empty", () => {
  for (const table of TABLES) {
    for (const [name] of [["a deleted API"], ["an API that never existed"]] as const) {
      test(`${table}: ${name}`, async () => {
        const key = viewers.get(name)!;
        expect(await rows(`SELECT COUNT(*) AS n FROM ${table}`, key)).toEqual([{ n: 0 }]);
        expect(await rows(`SELECT count() AS n FROM ${table}`, key)).toEqual([{ n: 0 }]);
        expect(await rows(`SELECT key_id, count() AS n FROM ${table} GROUP BY key_id`, key)).toEqual([]);
        expect(await rows(`SELECT * FROM ${table}`, key)).toEqual([]);
        expect(await rows(`SELECT count() AS n FROM ${table} AS a JOIN ${table} AS b ON a.key_id = b.key_id`, key)).toEqual([{ n: 0 }]);
        if (table !== "key_verifications_v1") {
          expect((await rows(`SELECT SUM(count) AS n FROM ${table}`, key))[0]!.n ?? 0).toBe(0);
        }
      });
    }
  }
});

describe("200: a WHERE that is plainly false is an empty answer on every table", () => {
  for (const table of TABLES) {
    test(table, async () => {
      expect((await rows(`SELECT count() AS n FROM ${table} WHERE 1`))[0]!.n).toBeGreaterThan(0);
      for (const where of ["0", "false", "1 AND 0", "time > 0 AND false", "NOT true"]) {
        expect(await rows(`SELECT count() AS n FROM ${table} WHERE ${where}`)).toEqual([{ n: 0 }]);
        expect(await rows(`SELECT key_id, count() AS n FROM ${table} WHERE ${where} GROUP BY key_id`)).toEqual([]);
      }
    });
  }
});
