/**
 * A fresh, migrated PostgreSQL database per test, on a server the test file started: CREATE
 * DATABASE is cheap where a second server is not.
 */
import { SQL } from "bun";
import { applyPgMigrations } from "../../src/storage/pg/migrate.ts";

/** Creates an empty database on the server of `admin` (reached at `serverUrl`), migrates it, and returns its URL. */
export async function freshDatabase(admin: SQL, serverUrl: string): Promise<string> {
  const name = `t_${crypto.randomUUID().replaceAll("-", "")}`;
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const sql = new SQL(url.href, { max: 1 });
  try {
    await applyPgMigrations(sql);
  } finally {
    await sql.close();
  }
  return url.href;
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
