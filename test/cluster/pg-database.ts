/**
 * A PostgreSQL server for a test file and a fresh, migrated database per test on it: CREATE
 * DATABASE is cheap where a second server is not.
 */
import { afterAll, beforeAll } from "bun:test";
import { SQL } from "bun";
import { applyPgMigrations } from "../../src/storage/pg/migrate.ts";
import { SERVER_START_TIMEOUT_MS, startPostgres, type TestServer } from "../support/servers.ts";
import { missing, requireTool } from "../support/tools.ts";

export interface PostgresForFile {
  /** A client of the server's `postgres` database, as its superuser. */
  admin(): SQL;
  /** Creates an empty database, migrates it, and returns its URL. */
  freshDatabase(): Promise<string>;
  /** As freshDatabase, sorting text by an ICU locale (e.g. "en-US") where the server's default sorts by bytes. */
  localeDatabase(icuLocale: string): Promise<string>;
  /** A client of `url` with a pool of `max`, closed after the file's tests. */
  client(url: string, max?: number): SQL;
}

/**
 * Starts a server in beforeAll and stops it in afterAll, after `beforeStop` and after closing the
 * clients handed out. Call it inside the describe that the server's absence skips.
 */
export function postgresForFile(beforeStop: () => Promise<void> = async () => undefined): PostgresForFile {
  let server: TestServer | undefined;
  let admin: SQL | undefined;
  const clients: SQL[] = [];

  beforeAll(async () => {
    requireTool(missing.postgres());
    server = await startPostgres();
    admin = new SQL(server.url, { max: 1 });
  }, SERVER_START_TIMEOUT_MS);

  afterAll(async () => {
    await beforeStop();
    for (const c of clients) await c.close();
    await admin?.close();
    await server?.stop();
  });

  const started = () => {
    if (server === undefined || admin === undefined) throw new Error("the PostgreSQL server is not started");
    return { server, admin };
  };
  const createDatabase = async (options: string) => {
    const { server, admin } = started();
    const name = `t_${crypto.randomUUID().replaceAll("-", "")}`;
    await admin.unsafe(`CREATE DATABASE "${name}" ${options}`);
    const url = new URL(server.url);
    url.pathname = `/${name}`;
    await applyPgMigrations(fixture.client(url.href, 1));
    return url.href;
  };
  const fixture: PostgresForFile = {
    admin: () => started().admin,
    freshDatabase: () => createDatabase(""),
    localeDatabase: (icuLocale) => createDatabase(`TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE '${icuLocale}'`),
    client(url, max = 2) {
      const sql = new SQL(url, { max });
      clients.push(sql);
      return sql;
    },
  };
  return fixture;
}

/** Resolves once `probe` resolves to a truthy value, asked every 10 ms; rejects after `timeoutMs` (waiting on the server, not passing test time). */
export async function eventually<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(10);
  }
}
