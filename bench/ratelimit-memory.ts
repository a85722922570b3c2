/**
 * What a live rate-limit window costs in memory, and whether the memory caps hold at their
 * defaults: each scenario fills a limiter in a fresh child process (run with the allocator setting
 * of `tollgate serve`) and reports resident memory and JS heap before and after, per window. The
 * numbers go to BENCHMARKS.md and the report, not into comments; WINDOW_FIXED_BYTES and
 * SCOPE_FIXED_BYTES (src/services/ratelimit/workspace-windows.ts) are chosen from them.
 *
 *   bun run bench/ratelimit-memory.ts            every scenario
 *   bun run bench/ratelimit-memory.ts short-1m   one scenario
 */
import { heapStats } from "bun:jsc";
import { SERVE_ALLOCATOR_ENV } from "../src/cli/allocator.ts";
import { loadConfig } from "../src/config.ts";
import { SlidingWindowLimiter, type LimitRequest } from "../src/services/ratelimit/index.ts";
import { WINDOW_FIXED_BYTES, SCOPE_FIXED_BYTES, type WindowCaps } from "../src/services/ratelimit/workspace-windows.ts";
import { TestClock } from "../test/support/test-clock.ts";

const MIB = 1024 * 1024;
const MINUTE = 60_000;

interface Scenario {
  /** Windows to create (more than the caps hold when capped). */
  windows: number;
  identifier: (i: number) => string;
  /** A scope per window (each its own duration) instead of one shared scope. */
  scopePerWindow?: boolean;
  workspaces?: number;
  caps?: WindowCaps;
}

const DEFAULTS = loadConfig({});
const DEFAULT_CAPS: WindowCaps = { totalBytes: DEFAULTS.ratelimitMemoryMiB * MIB, workspaceBytes: DEFAULTS.ratelimitWorkspaceMemoryMiB * MIB };
/** A unique identifier: the fill is never a base-36 digit. */
const pad = (prefix: string, i: number, length: number, fill: string) => (prefix + i.toString(36) + "-").padEnd(length, fill);

const SCENARIOS: Record<string, Scenario> = {
  "short-1m": { windows: 1_000_000, identifier: (i) => pad("u", i, 8, "-") },
  "typical-32-500k": { windows: 500_000, identifier: (i) => pad("user_", i, 32, "-") },
  "ascii-512-100k": { windows: 100_000, identifier: (i) => pad("ip_", i, 512, "-") },
  "utf16-512-100k": { windows: 100_000, identifier: (i) => pad("€", i, 512, "€") },
  "scope-per-window-200k": { windows: 200_000, identifier: (i) => pad("u", i, 8, "-"), scopePerWindow: true },
  "capped-utf16-512": { windows: 600_000, identifier: (i) => pad("€", i, 512, "€"), workspaces: 3, caps: DEFAULT_CAPS },
  "capped-short": { windows: 4_000_000, identifier: (i) => pad("u", i, 1, "-"), workspaces: 3, caps: DEFAULT_CAPS },
  "capped-scope-per-window": { windows: 1_500_000, identifier: (i) => pad("u", i, 1, "-"), scopePerWindow: true, workspaces: 3, caps: DEFAULT_CAPS },
};

interface Measured {
  rssBytes: number;
  heapBytes: number;
}

function measure(): Measured {
  Bun.gc(true);
  // heapSize already counts string buffers and typed-array stores (extraMemorySize is a part of it).
  return { rssBytes: process.memoryUsage.rss(), heapBytes: heapStats().heapSize };
}

/** Identifiers as a server gets them: fresh strings from JSON.parse, not ropes of the bench's making. */
function identifiersFrom(s: Scenario, from: number, to: number): string[] {
  const raw: string[] = [];
  for (let i = from; i < to; i++) raw.push(s.identifier(i));
  return JSON.parse(JSON.stringify(raw)) as string[];
}

async function runChild(name: string): Promise<void> {
  const s = SCENARIOS[name];
  if (s === undefined) throw new Error(`no scenario ${name}`);
  const clock = new TestClock(1_700_000_040_000);
  const limiter = new SlidingWindowLimiter({ clock, ...(s.caps ? { caps: s.caps } : {}) });
  const workspaces = Array.from({ length: s.workspaces ?? 1 }, (_, i) => `ws_${i}`);
  const before = measure();
  // Small batches: the bench's own garbage (JSON text of the batch) stays small beside the windows.
  const batch = 1_000;
  let peakRssBytes = 0;
  for (let from = 0; from < s.windows; from += batch) {
    // A turn of the event loop per batch, as between a server's requests: the collector's timers run.
    await new Promise((resolve) => setImmediate(resolve));
    peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss());
    const ids = identifiersFrom(s, from, Math.min(s.windows, from + batch));
    ids.forEach((identifier, k) => {
      const i = from + k;
      const workspace = workspaces[i % workspaces.length]!;
      const req: LimitRequest = {
        workspace, scope: `${workspace}|ns`, identifier, limit: 100, cost: 1,
        durationMs: s.scopePerWindow ? 1000 + i : MINUTE,
      };
      limiter.check(req);
    });
  }
  const after = measure();
  const stats = limiter.stats();
  console.log(JSON.stringify({
    scenario: name, windows: stats.windows, chargedMiB: +(stats.bytes / MIB).toFixed(1), unkept: stats.unkept, evicted: stats.evicted,
    rssMiB: +((after.rssBytes - before.rssBytes) / MIB).toFixed(1), peakRssMiB: +((peakRssBytes - before.rssBytes) / MIB).toFixed(1), heapMiB: +((after.heapBytes - before.heapBytes) / MIB).toFixed(1),
    rssPerWindow: Math.round((after.rssBytes - before.rssBytes) / stats.windows),
    heapPerWindow: Math.round((after.heapBytes - before.heapBytes) / stats.windows),
    chargedPerWindow: Math.round(stats.bytes / stats.windows),
  }));
}

async function runAll(names: string[]): Promise<void> {
  console.log(`Charged: ${WINDOW_FIXED_BYTES} B per window + 2 B per identifier character; ${SCOPE_FIXED_BYTES} B per scope + 2 B per key character. ` +
    "Each scenario in a fresh process; resident memory and JS heap after a full collection, less before.\n");
  console.log("| scenario | windows kept | charged MiB | evicted | unkept | RSS MiB (peak) | heap MiB | B/window: RSS, heap, charged |");
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const name of names) {
    const child = Bun.spawn(["bun", "run", import.meta.path, "--child", name], {
      env: { ...process.env, ...SERVE_ALLOCATOR_ENV }, stdout: "pipe", stderr: "inherit",
    });
    const out = await new Response(child.stdout).text();
    if ((await child.exited) !== 0) throw new Error(`scenario ${name} failed`);
    const r = JSON.parse(out);
    console.log(`| ${r.scenario} | ${r.windows.toLocaleString("en")} | ${r.chargedMiB} | ${r.evicted.toLocaleString("en")} | ${r.unkept.toLocaleString("en")} | ` +
      `${r.rssMiB} (${r.peakRssMiB}) | ${r.heapMiB} | ${r.rssPerWindow}, ${r.heapPerWindow}, ${r.chargedPerWindow} |`);
  }
}

const args = process.argv.slice(2);
if (args[0] === "--child") await runChild(args[1]!);
else await runAll(args.length > 0 ? args : Object.keys(SCENARIOS));
