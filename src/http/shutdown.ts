/**
 * The first step of a graceful stop: stop accepting connections and let the requests in flight
 * finish, but for at most `timeoutMs` (TOLLGATE_SHUTDOWN_TIMEOUT_MS). A client that never finishes
 * its request must not hold the stop past that limit, past systemd's patience: its connection is
 * closed instead. Its request was never answered, so no acknowledged write is lost by that.
 */
import type { Logger } from "../lib/logger.ts";

interface Stoppable {
  server: { stop(closeActiveConnections?: boolean): Promise<void> | void } | null;
  stop(closeActiveConnections?: boolean): Promise<unknown>;
}

/** Resolves once the listener is closed and no request is in flight any more. */
export async function stopAccepting(app: Stoppable, timeoutMs: number, logger: Logger): Promise<void> {
  const server = app.server;
  if (!server) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const outcome = await Promise.race([app.stop(false).then(() => "drained" as const), timedOut]);
    if (outcome === "timeout") {
      logger.warn("requests still in flight at the shutdown timeout; closing their connections", { timeoutMs });
      await server.stop(true);
    }
  } finally {
    clearTimeout(timer);
  }
}
