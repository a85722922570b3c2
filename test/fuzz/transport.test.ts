/**
 * The transport campaign, short deterministic form (a fixed seed, FUZZ_SEED to change it): a few
 * bodies of random shapes per route (chunked, declared at and past the limit, cut short, trickled,
 * keyless and trickled, bursts, malformed framing, odd request lines and Hosts) against a harness
 * with short body bounds, whose log is kept to find each odd request's one access line. The long form is
 * `bun run test:fuzz` (FUZZ_TRANSPORT shapes per route).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { seedFrom } from "../support/prng.ts";
import { runTransportCampaign, transportHarnessEnv } from "./transport.ts";

let h: Harness;
const logLines: string[] = [];
beforeAll(async () => { h = await startHarness({ env: transportHarnessEnv(), logLines }); });
afterAll(async () => { await h.stop(); });

test("every route answers chunked, oversized, slow and concurrent bodies within its bounds, in the envelope, and a refusal changes nothing", async () => {
  const seed = process.env.FUZZ_SEED ? seedFrom("FUZZ_SEED", process.env) : 20260522;
  const summary = await runTransportCampaign(h, { seed, perRoute: 3, logLines });
  expect({ seed, problems: summary.problems }).toEqual({ seed, problems: [] });
  expect(Object.keys(summary.shapes).sort()).toEqual(["burst", "cut short", "keyless", "malformed framing", "near the limit", "odd request", "random size", "slow"]);
}, 60_000);
