/**
 * The memory allocator setting `serve` runs with. Bun's allocator (mimalloc) returns memory that a
 * garbage collection freed to the system within milliseconds, and the engine faults it back in for
 * the next requests. Under load that churn is a good part of the server's CPU per verification or
 * limit: two helper threads (JSCWarmUp, mi-scavenger) and page faults on the main thread. With
 * purging off, freed memory stays with the process and is reused, so resident memory stays near
 * its peak instead (the numbers: BENCHMARKS.md, "Measurements behind design choices").
 *
 * mimalloc reads its options from the environment when the process starts, before any of our code
 * runs, so `serve` re-executes itself in place (same PID, so systemd and signals are unaffected)
 * with the setting added, which lengthens the start a little; the systemd unit sets the variable
 * and spares it. An operator who sets the variable keeps their value: e.g. MIMALLOC_PURGE_DELAY=10,
 * mimalloc's default, trades that CPU for returning memory sooner.
 */

import { runsServe } from "./command-line.ts";

/** The variable and the value `serve` runs with unless the environment already names one. */
export const SERVE_ALLOCATOR_ENV: Readonly<Record<string, string>> = { MIMALLOC_PURGE_DELAY: "-1" };

export interface ProcessFacts {
  /** process.argv: the runtime, the script (or the executable's embedded entry), then the arguments. */
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  execPath: string;
  /** The runtime's own flags (`bun --smol src/main.ts` → ["--smol"]); none in an executable. */
  execArgv: readonly string[];
  /** Bun.main: `/$bunfs/…` inside an executable built with `bun build --compile`. */
  main: string;
}

export interface Reexec {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The execve that restarts this process as `serve` with SERVE_ALLOCATOR_ENV; undefined when there is
 * nothing to do. Whether the command line runs `serve` is the CLI's own reading of it.
 */
export function allocatorReexec(facts: ProcessFacts): Reexec | undefined {
  const args = facts.argv.slice(2);
  if (!runsServe(args)) return undefined;
  const missing = Object.entries(SERVE_ALLOCATOR_ENV).filter(([name]) => facts.env[name] === undefined);
  if (missing.length === 0) return undefined;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(facts.env)) if (value !== undefined) env[name] = value;
  for (const [name, value] of missing) env[name] = value;
  // An executable starts its embedded entry by itself; the runtime needs its flags and the script again.
  const compiled = facts.main.startsWith("/$bunfs/");
  const head = compiled ? [facts.execPath] : [facts.execPath, ...facts.execArgv, facts.argv[1] ?? facts.main];
  return { file: facts.execPath, args: [...head, ...args], env };
}
