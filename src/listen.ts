/**
 * What starting the service gives, in either mode, and its listener: alone on its address.
 */
import type { Config } from "./config.ts";
import type { Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/logger.ts";
import type { Storage } from "./storage/db.ts";
import type { Services } from "./services/index.ts";
import type { SlidingWindowLimiter } from "./services/ratelimit/index.ts";
import type { createApp } from "./app.ts";

export interface BootOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
}

/** A started service: the embedded mode's (with its data dir's databases) or a cluster node's. */
export type Running = EmbeddedRunning | ClusterRunning;

interface RunningService {
  url: string;
  port: number;
  services: Services;
  stop(): Promise<void>;
}

export interface EmbeddedRunning extends RunningService {
  mode: "embedded";
  /** tollgate.db: the records. */
  storage: Storage;
  /** analytics.db: verification events and rollups (storage/data-dir.ts). */
  analytics: Storage;
  /** The rate-limit windows, in memory and saved across restarts. */
  limiter: SlidingWindowLimiter;
}

/** A cluster node: its records and analytics are in PostgreSQL; its data dir holds no database. */
export interface ClusterRunning extends RunningService {
  mode: "cluster";
}

/**
 * Throws as listenAlone would when the address cannot be listened on (in use, not allowed), by
 * binding it once and letting it go: run before a start creates its data dir, bootstrap key or
 * anything else, so that a start doomed by its port leaves nothing behind. Port 0 always listens.
 */
export function checkCanListen(config: Config): void {
  if (config.port === 0) return;
  try {
    Bun.listen({ hostname: config.host, port: config.port, socket: { data() {} } }).stop(true);
  } catch (error) {
    throw cannotListen(config, error);
  }
}

function cannotListen(config: Config, error: unknown): Error {
  const address = `${displayHost(config.host)}:${config.port}`;
  if ((error as { code?: unknown }).code === "EADDRINUSE") return new Error(`cannot listen on ${address}: address in use (another process listens there)`);
  return new Error(`cannot listen on ${address}: ${(error as Error).message}`);
}

/** The listener, alone on its address: Elysia turns SO_REUSEPORT on, which lets a second process share the port. */
export function listenAlone(app: ReturnType<typeof createApp>, config: Config): void {
  try {
    // No body size limit of Bun's own: it would answer a body over it with an empty 413 before any
    // route sees it (no envelope, no log); the routes' limits stop every body (http/body-reader.ts).
    app.listen({
      hostname: config.host, port: config.port, reusePort: false,
      maxRequestBodySize: Number.MAX_SAFE_INTEGER, idleTimeout: config.http.idleTimeoutSeconds,
    });
  } catch (error) {
    throw cannotListen(config, error);
  }
}

export function displayHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

