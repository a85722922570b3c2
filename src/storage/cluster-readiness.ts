/**
 * The probes of a cluster node's servers, for its outage watch and readiness's migrations check,
 * each answered within `timeoutMs`: PostgreSQL answers one read of its migrations table (a round
 * trip that also says they are this version's), Redis answers PING. A server that stops answering without closing its connections (a frozen
 * host, a dropped network) can leave a connect or a query hanging far longer: the probe then
 * answers "not ready" at its bound and leaves the hanging query to finish alone, and later probes
 * wait for that same query rather than sending more, so the probes keep at most one query per
 * server in flight. PostgreSQL is asked over a connection of the probe's own, so that a pool busy
 * with requests does not read as an outage. The reasons name the server and Bun's error code,
 * never the URL.
 */
import { SQL, type RedisClient } from "bun";
import { within } from "../lib/within.ts";
import type { EmbeddedMigration } from "./migrations.ts";
import { migrationsVerdict } from "./readiness.ts";
import { unreachableStore } from "./unreachable.ts";

/** Why a server is down (or, PostgreSQL, of another version), or undefined when it answers; never rejects. */
export type ServerProbe = () => Promise<string | undefined>;

/** `ask`, at most one at a time, each caller answered within `timeoutMs`. */
function singleFlight(name: string, timeoutMs: number, ask: () => Promise<string | undefined>): ServerProbe {
  let inFlight: Promise<string | undefined> | undefined;
  return () => {
    inFlight ??= ask().finally(() => {
      inFlight = undefined;
    });
    return within(inFlight, timeoutMs, () => `${name} did not answer within ${timeoutMs} ms.`);
  };
}

/** The codes of a client's error, without its message (which could one day quote an address). */
function codesOf(error: unknown): string {
  const away = unreachableStore(error);
  if (away !== undefined) return away.code;
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return [code, errno].filter((part) => typeof part === "string" && part !== "").join(" ") || (error as Error)?.name || "unknown error";
}

/**
 * The probe of PostgreSQL at `url`, over a connection of its own; `close` ends it. `versionVerdict`
 * is what the last answered probe said of the migrations (undefined when they are this version's,
 * or before any answer): unlike an outage, which every node shares, migrations this node's version
 * does not know make this node unfit to serve.
 */
export function postgresProbe(url: string, migrations: readonly EmbeddedMigration[], timeoutMs: number): { probe: ServerProbe; versionVerdict(): string | undefined; close(): Promise<void> } {
  const sql = new SQL(url, { max: 1, connectionTimeout: Math.max(1, Math.ceil(timeoutMs / 1000)) });
  const last: { verdict?: string } = {};
  const ask = async () => {
    let latest: number;
    try {
      const [row] = await sql<Array<{ latest: number | null }>>`SELECT max(created_at)::float8 AS latest FROM "drizzle"."__drizzle_migrations"`;
      latest = Number(row?.latest ?? 0);
    } catch (error) {
      const away = unreachableStore(error);
      return away ? `PostgreSQL cannot be reached (${away.code}).` : `PostgreSQL: its migrations cannot be read (${codesOf(error)}).`;
    }
    last.verdict = migrationsVerdict("PostgreSQL", latest, migrations);
    return last.verdict;
  };
  return { probe: singleFlight("PostgreSQL", timeoutMs, ask), versionVerdict: () => last.verdict, close: () => sql.close() };
}

/**
 * The probe of Redis through the node's own client (what its rate limits use). Bun stops
 * reconnecting after a few tries, so a probe that finds it away starts connecting it again
 * (`reconnect`), without waiting: a connect waits through all its retries, and a later probe finds
 * whether it worked.
 */
export function redisProbe(client: RedisClient, reconnect: () => Promise<void>, timeoutMs: number): ServerProbe {
  return singleFlight("Redis", timeoutMs, async () => {
    if (!client.connected) {
      void reconnect();
      return "Redis cannot be reached (not connected; connecting again).";
    }
    try {
      await client.send("PING", []);
      return undefined;
    } catch (error) {
      return `Redis cannot be reached (${codesOf(error)}).`;
    }
  });
}
