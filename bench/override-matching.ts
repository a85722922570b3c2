/**
 * What one rate-limit check costs in override matching when a namespace holds the most wildcard
 * overrides it may (DEFAULT_WILDCARD_OVERRIDES, and ten times that), each a hostile 512-character
 * pattern built to be slow against a 512-character identifier that none of them matches: the
 * worst a caller who may set overrides can make every other caller's check on that namespace
 * pay. Matching only, in this process; the numbers go to BENCHMARKS.md and the report.
 *
 *   bun run bench/override-matching.ts
 */
import { DEFAULT_WILDCARD_OVERRIDES, OverrideIndex, type OverrideRecord } from "../src/services/ratelimit/index.ts";

const LENGTH = 512;
const identifier = "a".repeat(LENGTH);

/** Patterns that pass the prefix, suffix and length tests and fail only in their middle part. */
const SHAPES: Record<string, (i: number) => string> = {
  "one long middle": (i) => `*${"a".repeat(LENGTH / 2 - 8)}b${String(i).padStart(6, "0")}${"a".repeat(LENGTH / 2 - 10)}*`,
  "many short middles": (i) => `${"*aaaaaaa".repeat(LENGTH / 8 - 2)}*b${String(i).padStart(6, "0")}*`,
  "stars between letters": (i) => `${"*a".repeat(LENGTH / 2 - 8)}*b${String(i).padStart(6, "0")}*`,
};

function record(i: number, pattern: string): OverrideRecord {
  return { id: `rlor_${i}`, identifier: pattern.slice(0, LENGTH), limit: 1, duration: 60_000, createdAt: i };
}

function microsPerCheck(index: OverrideIndex): number {
  for (let i = 0; i < 20; i++) index.match(identifier);
  const checks = 200;
  const started = Bun.nanoseconds();
  for (let i = 0; i < checks; i++) if (index.match(identifier) !== undefined) throw new Error("a pattern matched");
  return (Bun.nanoseconds() - started) / checks / 1000;
}

for (const count of [DEFAULT_WILDCARD_OVERRIDES, DEFAULT_WILDCARD_OVERRIDES * 10]) {
  for (const [shape, pattern] of Object.entries(SHAPES)) {
    const index = new OverrideIndex(Array.from({ length: count }, (_, i) => record(i, pattern(i))));
    console.log(`${String(count).padStart(5)} wildcards, ${shape.padEnd(22)} ${microsPerCheck(index).toFixed(1).padStart(8)} µs per check`);
  }
}
