/**
 * Crash durability, short form: three rounds of mixed load against the real `tollgate serve`,
 * each ended by SIGKILL at a random moment, then a restart and the checks of verify.ts and
 * verify-keys.ts. The long form (20+ rounds) is `bun run test:crash`. The seed is printed;
 * CRASH_SEED reproduces a run.
 */
import { expect, test } from "bun:test";
import { seedFrom } from "../support/prng.ts";
import { describeRound, runCrashRounds } from "./rounds.ts";

test("three SIGKILLs under mixed load lose nothing acknowledged", async () => {
  const seed = seedFrom("CRASH_SEED", process.env);
  console.log(`crash: seed ${seed}`);
  const summary = await runCrashRounds({ rounds: 3, seed, flushMs: 100, maxAnswersBeforeKill: 600 });
  expect({ seed, problems: summary.problems }).toEqual({ seed, problems: [] });
  expect(summary.rounds.map(describeRound)).toHaveLength(3);
}, 180_000);
