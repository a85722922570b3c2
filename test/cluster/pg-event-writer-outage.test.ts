/**
 * The cluster's event writer while PostgreSQL hangs (its processes stopped with SIGSTOP: the
 * connections stay open and nothing answers): a write gives up within its bound, naming every
 * event of the batch, and the transaction it gave up rolls back once the server answers again, so
 * those events are not written twice when the sink writes them again. A server of the file's own,
 * since it is frozen.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { EventWriteError } from "../../src/services/analytics/index.ts";
import { PgEventWriter } from "../../src/services/analytics/pg-writer.ts";
import { applyPgMigrations } from "../../src/storage/pg/migrate.ts";
import { SERVER_START_TIMEOUT_MS, startPostgres, type RestartableServer } from "../support/servers.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";
import { asRecorded, makeEvents, pack } from "./analytics-events.ts";
import { eventually } from "./pg-database.ts";

const TIMEOUT_MS = 300;
/** Slack for a loaded machine on top of the bound. */
const ANSWER_SLACK_MS = 2000;

/** Stops (or continues) the server and its backends. */
function signalAll(server: RestartableServer, signal: "SIGSTOP" | "SIGCONT"): void {
  const children = Bun.spawnSync(["pgrep", "-P", String(server.pid)]).stdout.toString().split("\n").filter(Boolean).map(Number);
  for (const pid of [server.pid, ...children]) process.kill(pid, signal);
}

describe.skipIf(skipWithout(missing.postgres(), "the event writer while PostgreSQL hangs"))("the event writer while PostgreSQL hangs", () => {
  let server: RestartableServer;
  let sql: SQL;

  beforeAll(async () => {
    requireTool(missing.postgres());
    server = await startPostgres();
    sql = new SQL(server.url, { max: 3 });
    await applyPgMigrations(sql);
  }, SERVER_START_TIMEOUT_MS);

  afterAll(async () => {
    await sql?.close();
    await server?.stop();
  });

  test("a write gives up within its bound naming its events, and what it gave up never commits", async () => {
    const writer = new PgEventWriter(sql, { timeoutMs: TIMEOUT_MS });
    const frozen = makeEvents(40, 1);
    signalAll(server, "SIGSTOP");
    let error: unknown;
    try {
      const startedMs = performance.now();
      error = await writer.write(pack(frozen)).catch((e: unknown) => e);
      expect(performance.now() - startedMs).toBeLessThan(TIMEOUT_MS + ANSWER_SLACK_MS);
    } finally {
      signalAll(server, "SIGCONT");
    }
    expect(error).toBeInstanceOf(EventWriteError);
    expect((error as EventWriteError).message).toContain(`within ${TIMEOUT_MS} ms`);
    expect((error as EventWriteError).unwritten).toEqual(asRecorded(frozen));
    // The sink would give the same events again: written once, with the next batch.
    const next = makeEvents(10, 2);
    await writer.write(pack([...frozen, ...next]));
    await writer.close();
    // The transaction given up has gone its way once no other session is in one (then nothing can commit later).
    await eventually(async () => (await sql`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`)[0].n === 0, 10_000, "the given-up transaction settled");
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM analytics.verification_events`;
    const [{ total }] = await sql`SELECT sum("count")::int AS total FROM analytics.verification_totals_day`;
    expect({ n, total }).toEqual({ n: 50, total: 50 });
  }, 30_000);
});
