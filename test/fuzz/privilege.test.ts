/**
 * The least-privilege campaign, short deterministic form (a fixed seed, FUZZ_SEED to change it):
 * every route called by a root key holding exactly its grants and by one holding a neighbouring
 * route's, beside a second workspace with the same fixtures. The long form is `bun run test:fuzz`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { seedFrom } from "../support/prng.ts";
import { runPrivilegeCampaign } from "./privilege.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness({ env: { TOLLGATE_RATELIMIT_FLUSH_MS: "60000" } }); });
afterAll(async () => { await h.stop(); });

test("no caller gets more than its grants, sees the other workspace, or tells a foreign record from a missing one", async () => {
  const seed = process.env.FUZZ_SEED ? seedFrom("FUZZ_SEED", process.env) : 20261126;
  const summary = await runPrivilegeCampaign(h, { seed, perRoute: 8 });
  expect({ seed, problems: summary.problems }).toEqual({ seed, problems: [] });
  expect(summary.requests).toBeGreaterThan(800);
}, 180_000);
