/**
 * `bun run test:crash`: the long form of the crash-durability loop. CRASH_ROUNDS (default 20),
 * CRASH_SEED (default random; printed), CRASH_FLUSH_MS (default 100). Exits 1 on any problem.
 */
import { seedFrom } from "../support/prng.ts";
import { lossWindowMs, runCrashRounds } from "./rounds.ts";

const rounds = Number(process.env.CRASH_ROUNDS ?? "20");
const flushMs = Number(process.env.CRASH_FLUSH_MS ?? "100");
const seed = seedFrom("CRASH_SEED", process.env);
console.log(`crash: ${rounds} rounds, seed ${seed} (CRASH_SEED=${seed} reproduces the choices), flush every ${flushMs} ms, loss window ${lossWindowMs(flushMs)} ms`);
const summary = await runCrashRounds({ rounds, seed, flushMs, maxAnswersBeforeKill: 2000, log: (line) => console.log(line) });
const sum = (pick: (r: (typeof summary.rounds)[number]) => Record<string, number>) => {
  const totals: Record<string, number> = {};
  for (const r of summary.rounds) for (const [k, n] of Object.entries(pick(r))) totals[k] = (totals[k] ?? 0) + n;
  return Object.entries(totals).sort(([, a], [, b]) => b - a).map(([k, n]) => `${k} ${n}`).join(", ");
};
const total = summary.rounds.reduce((n, r) => n + r.acknowledged, 0);
const unanswered = summary.rounds.reduce((n, r) => n + r.unanswered, 0);
const lost = summary.rounds.reduce((n, r) => n + r.limitLost, 0);
const last = summary.rounds.at(-1);
console.log(`crash: ${summary.rounds.length} rounds in ${(summary.durationMs / 1000).toFixed(1)} s, ${total} acknowledged requests (${sum((r) => r.byOp)}), `
  + `${unanswered} unanswered at kills, ${lost} rate-limit counts lost in all (each within its window); `
  + `after the restarts, keys verified by plaintext: ${sum((r) => r.verifiedByCode)}; `
  + `${last?.events ?? 0} verification events and ${last?.rootKeys.revoked ?? 0} revoked root keys at the end; ${summary.problems.length} problems, seed ${seed}`);
if (summary.problems.length > 0 || summary.rounds.length < rounds) process.exit(1);
