/**
 * The hidden command `tollgate analytics-query-process`: what an analytics query process runs
 * (services/analytics/query-process.ts). `serve` starts it with an IPC channel; `tollgate help`
 * does not list it, and without the channel it refuses to run.
 */
import { join } from "node:path";
import type { ParentChannel } from "../services/analytics/index.ts";

export const ANALYTICS_QUERY_PROCESS_COMMAND = "analytics-query-process";

/**
 * The argv that starts a query process from this very program. From sources the runtime needs
 * main.ts; an executable built with `bun build --compile` starts its embedded main by itself (every
 * module's directory in it lies under /$bunfs/). Never Bun.main: in tests that is the test file.
 */
export function analyticsQueryProcessArgv(execPath = process.execPath): string[] {
  const main = join(import.meta.dir, "..", "main.ts");
  return main.startsWith("/$bunfs/") ? [execPath, ANALYTICS_QUERY_PROCESS_COMMAND] : [execPath, main, ANALYTICS_QUERY_PROCESS_COMMAND];
}

/** Serves queries over `parent` until `serve` kills the process or is gone itself. */
export async function runAnalyticsQueryProcess(parent: ParentChannel): Promise<void> {
  // Loaded here, not at the top: no other command needs it.
  const { serveAnalyticsQueries } = await import("../services/analytics/index.ts");
  serveAnalyticsQueries(parent);
}
