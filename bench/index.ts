/**
 * `bun run bench`: every benchmark, one after the other, each in its own process so that none
 * inherits another's heap or threads; prints one Markdown report (and writes it to BENCH_OUT when
 * set). BENCH_ONLY picks some by name (e.g. `BENCH_ONLY=verify,ratelimit`); BENCH_SECONDS and
 * BENCH_ROUNDS are passed on. Each benchmark measures tollgate against the bare Bun.serve echo in
 * the same run, so read the ratios: absolute numbers on a shared machine drift (BENCHMARKS.md).
 */
import { existsSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { ROOT } from "./lib.ts";

interface Suite {
  name: string;
  file: string;
  /** What the suite shows, for the report. */
  title: string;
  env?: Record<string, string>;
}

const SUITES: Suite[] = [
  { name: "floor", file: "floor.ts", title: "the floor: the least a verification or a rate-limit check does over HTTP on this stack" },
  { name: "verify", file: "verify.ts", title: "keys.verifyKey, and its cost curve over the number of keys", env: { BENCH_KEYS: process.env.BENCH_KEYS ?? "1000,100000,1000000" } },
  { name: "ratelimit", file: "ratelimit.ts", title: "ratelimit.limit: throughput, cost curve over identifiers, memory, accuracy" },
  { name: "ratelimit-memory", file: "ratelimit-memory.ts", title: "rate-limit windows: memory per window, and the memory caps at their defaults" },
  { name: "ratelimit-peer", file: "ratelimit-peer.ts", title: "ratelimit.limit against rate-limiter-flexible on Redis" },
  { name: "create-key", file: "create-key.ts", title: "keys.createKey" },
  { name: "big-meta", file: "big-meta.ts", title: "keys.verifyKey of keys with a 1 MB meta: time a verification holds the server, memory" },
  { name: "big-lists", file: "big-lists.ts", title: "list pages of identities and keys with a 1 MB meta, four in parallel, against another workspace's verification" },
  { name: "analytics-query", file: "analytics-query.ts", title: "analytics.getVerifications: a 365-day per-day query over 10,000 keys" },
  { name: "analytics-overhead", file: "analytics-overhead.ts", title: "what the verification event pipeline costs verifyKey" },
  { name: "analytics-runaway", file: "analytics-runaway.ts", title: "keys.verifyKey while other workspaces keep runaway analytics queries going" },
  { name: "keyless-flood", file: "keyless-flood.ts", title: "keyless slow bodies and a malformed-header flood against a legitimate client" },
  { name: "latency", file: "latency.ts", title: "latency at light load: p50 and p99 with one and four connections" },
  { name: "appliance", file: "appliance.ts", title: "the executable: size, start-up, idle memory" },
  { name: "cluster", file: "cluster.ts", title: "keys.verifyKey on one, two and three cluster nodes against the embedded mode" },
];

async function runSuite(suite: Suite): Promise<string> {
  const path = join(ROOT, "bench", suite.file);
  if (!existsSync(path)) return `_${suite.file} is missing; skipped._`;
  const started = performance.now();
  const proc = Bun.spawn(["bun", "run", path], { cwd: ROOT, env: { ...process.env, ...suite.env }, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  const code = await proc.exited;
  const took = `_(${((performance.now() - started) / 1000).toFixed(0)} s${code === 0 ? "" : `, exited with ${code}`})_`;
  return `${out.trim()}\n\n${took}`;
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = only?.filter((name) => !SUITES.some((s) => s.name === name)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown benchmark(s) ${unknown.join(", ")}; known: ${SUITES.map((s) => s.name).join(", ")}`);
  const suites = only ? SUITES.filter((s) => only.includes(s.name)) : SUITES;
  const cpu = cpus();
  const report = [
    `## ${new Date().toISOString().slice(0, 10)}, ${process.arch}, ${cpu.length} × ${cpu[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Bun ${Bun.version}`,
  ];
  let failed = 0;
  for (const suite of suites) {
    console.error(`running ${suite.name}…`);
    const section = await runSuite(suite);
    if (section.includes("exited with")) failed++;
    report.push(`\n## ${suite.title}\n\n${section}`);
    // Print as we go: a long run shows its results before it ends.
    console.log(report.at(-1));
  }
  if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, `${report.join("\n")}\n`);
  if (failed > 0) process.exitCode = 1;
}

await main();
