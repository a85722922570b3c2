/**
 * The analytics SQL guard and the permission-query parser behind the API, short deterministic
 * form (FUZZ_SEED to change the seed); the long form is `bun run test:fuzz`. The parser alone is
 * fuzzed in test/services/verification/permission-query.fuzz.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { seedFrom } from "../support/prng.ts";
import { runQueryCampaign } from "./queries.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness({ env: { TOLLGATE_RATELIMIT_FLUSH_MS: "60000" } }); });
afterAll(async () => { await h.stop(); });

test("random and mutated analytics SQL and permission queries: only documented refusals, nothing changed", async () => {
  const seed = process.env.FUZZ_SEED ? seedFrom("FUZZ_SEED", process.env) : 7_2026;
  const summary = await runQueryCampaign(h, { seed, sql: 300, permissions: 400 });
  expect({ seed, problems: summary.problems }).toEqual({ seed, problems: [] });
  // Both paths were taken: some queries ran, some were refused.
  expect(Object.keys(summary.byStatus).sort()).toEqual(expect.arrayContaining(["200", "400"]));
}, 120_000);
