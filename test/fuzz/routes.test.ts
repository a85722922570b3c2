/**
 * Hostile input, short deterministic form: a sample of the hostile bodies of every route (a fixed
 * seed, FUZZ_SEED to change it), the other methods and junk query strings. No 5xx, every error in
 * the envelope, nothing stored changed by a refused request, and no prototype polluted.
 * The long form (every hostile body of every route) is `bun run test:fuzz`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { seedFrom } from "../support/prng.ts";
import { runRouteCampaign } from "./campaign.ts";
import { digest } from "./digest.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness({ env: { TOLLGATE_RATELIMIT_FLUSH_MS: "60000" } }); });
afterAll(async () => { await h.stop(); });

test("every route refuses hostile bodies cleanly and changes nothing when it refuses", async () => {
  const seed = process.env.FUZZ_SEED ? seedFrom("FUZZ_SEED", process.env) : 20260412;
  const summary = await runRouteCampaign(h, { seed, perRoute: 40 });
  expect({ seed, problems: summary.problems }).toEqual({ seed, problems: [] });
  expect(summary.requests).toBeGreaterThan(1500);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.keys(Object.prototype)).toEqual([]);
}, 120_000);

test("the digest sees a stored change, and names the tables it touched", async () => {
  const before = digest(h);
  expect(digest(h).hash).toBe(before.hash);
  expect((await h.post("/v2/apis.createApi", { name: "digest-check" })).status).toBe(200);
  expect(digest(h).changedSince(before)).toEqual(expect.arrayContaining(["apis", "audit_logs"]));
});

test("a change the rate-limit flush makes is not laid at a request's door; any other change is", async () => {
  expect((await h.post("/v2/ratelimits.limit", { namespace: "digest-check", identifier: "u1", limit: 10, duration: 60_000 })).status).toBe(200);
  const before = digest(h);
  await h.restart();
  // Stopping flushed the window to the log, as the flush timer does: only changedSince reports it.
  expect(digest(h).changedSince(before)).toEqual(["ratelimit_log"]);
  expect(digest(h).changedByRequestsSince(before)).toEqual([]);
  h.embedded.storage.sqlite.run("DELETE FROM apis WHERE name = 'digest-check'");
  expect(digest(h).changedByRequestsSince(before)).toEqual(["apis"]);
});
