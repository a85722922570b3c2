/**
 * The PostgreSQL migrations (migrations/pg, applied by src/storage/pg/migrate.ts) against a real
 * server: they build every table of the PostgreSQL schema in an empty database, a second run
 * changes nothing, rows read back as written through drizzle, and the constraints hold.
 * One server for the file; a fresh database per test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { getTableColumns, getTableName, is } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import { migrate as drizzleMigrate } from "drizzle-orm/bun-sql/migrator";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { DatabaseTooNewError } from "../../src/storage/migrate.ts";
import { applyPgMigrations, migratePostgres } from "../../src/storage/pg/migrate.ts";
import { PG_JOURNAL_TAGS, PG_MIGRATIONS } from "../../src/storage/pg/migrations.ts";
import * as pg from "../../src/storage/pg/schema/index.ts";
import { startPostgres, type TestServer } from "../support/servers.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";
import { SAMPLE_ROWS } from "./pg-sample-rows.ts";

const MIGRATIONS_DIR = join(import.meta.dir, "../../migrations/pg");
const pgTables = Object.values(pg as Record<string, unknown>).filter((v): v is PgTable => is(v, PgTable));

/**
 * Turns off the triggers that keep workspace_usage (migration 0005): the sample rows, its own
 * included, are read back exactly as written. test/routes/quotas and test/cluster/quotas.test.ts
 * check what the triggers count.
 */
async function withoutUsageTriggers(sql: SQL): Promise<void> {
  const triggers = await sql`SELECT tgrelid::regclass::text AS "table", tgname AS name FROM pg_trigger WHERE tgname LIKE 'workspace_usage_%'`;
  expect(triggers.length).toBeGreaterThan(0);
  for (const t of triggers as Array<{ table: string; name: string }>) await sql.unsafe(`ALTER TABLE ${t.table} DISABLE TRIGGER ${t.name}`);
}

test("every migration in migrations/pg is embedded, in journal order", () => {
  expect(PG_MIGRATIONS.map((m) => m.tag)).toEqual(PG_JOURNAL_TAGS);
  expect([...new Bun.Glob("*.sql").scanSync(MIGRATIONS_DIR)].sort()).toEqual(PG_JOURNAL_TAGS.map((t) => `${t}.sql`));
});

test("the sample rows cover every table and every column but the identities", () => {
  expect(SAMPLE_ROWS.map((r) => getTableName(r.table)).sort()).toEqual(pgTables.map(getTableName).sort());
  for (const { table, values } of SAMPLE_ROWS) {
    const columns = Object.entries(getTableColumns(table)).filter(([, c]) => c.generatedIdentity === undefined).map(([key]) => key);
    expect({ table: getTableName(table), columns: Object.keys(values).sort() }).toEqual({ table: getTableName(table), columns: columns.sort() });
  }
});

describe.skipIf(skipWithout(missing.postgres(), "the PostgreSQL migration checks"))("PostgreSQL migrations", () => {
  let server: TestServer;
  let admin: SQL;

  beforeAll(async () => {
    requireTool(missing.postgres());
    server = await startPostgres();
    admin = new SQL(server.url, { max: 1 });
  });

  afterAll(async () => {
    await admin?.close();
    await server?.stop();
  });

  /** Creates an empty database and runs `use` with its URL and a client of it, closed afterwards. */
  async function withDatabase(use: (url: string, sql: SQL) => Promise<void>): Promise<void> {
    const name = `t_${crypto.randomUUID().replaceAll("-", "")}`;
    await admin.unsafe(`CREATE DATABASE "${name}"`);
    const url = new URL(server.url);
    url.pathname = `/${name}`;
    const sql = new SQL(url.href, { max: 2 });
    try {
      await use(url.href, sql);
    } finally {
      await sql.close();
    }
  }

  /** Tables, columns with their types, indexes, constraints and recorded migrations of the public and drizzle schemas. */
  async function catalogue(sql: SQL): Promise<unknown> {
    const columns = await sql`SELECT table_schema, table_name, column_name, data_type, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema IN ('public', 'drizzle') ORDER BY 1, 2, 3`;
    const indexes = await sql`SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes WHERE schemaname IN ('public', 'drizzle') ORDER BY 1, 2, 3`;
    const constraints = await sql`SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE connamespace IN ('public'::regnamespace, 'drizzle'::regnamespace) ORDER BY 1`;
    const recorded = await sql`SELECT id, hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id`;
    return { columns: [...columns], indexes: [...indexes], constraints: [...constraints], recorded: [...recorded] };
  }

  test("migrations apply to an empty database, and a second run applies nothing and changes nothing", async () => {
    await withDatabase(async (url, sql) => {
      expect(await migratePostgres(url)).toEqual(PG_JOURNAL_TAGS);
      const first = await catalogue(sql);
      expect(await migratePostgres(url)).toEqual([]);
      expect(await catalogue(sql)).toEqual(first);
    });
  });

  test("drizzle's own migrator finds the database up to date: the records are the ones it writes", async () => {
    await withDatabase(async (url, sql) => {
      await migratePostgres(url);
      const before = await catalogue(sql);
      await drizzleMigrate(drizzle({ client: sql }), { migrationsFolder: MIGRATIONS_DIR });
      expect(await catalogue(sql)).toEqual(before);
    });
  });

  test("nodes migrating at once apply each migration once", async () => {
    await withDatabase(async (url, sql) => {
      const results = await Promise.all([migratePostgres(url), migratePostgres(url), migratePostgres(url)]);
      expect(results.flat().sort()).toEqual([...PG_JOURNAL_TAGS].sort());
      const [row] = await sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
      expect(row.n).toBe(PG_JOURNAL_TAGS.length);
    });
  });

  test("a database that records a migration this version lacks is refused, unchanged", async () => {
    await withDatabase(async (url, sql) => {
      await migratePostgres(url);
      const future = PG_MIGRATIONS.at(-1)!.createdAt + 1;
      await sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-version', ${future})`;
      const before = await catalogue(sql);
      await expect(applyPgMigrations(sql, PG_MIGRATIONS)).rejects.toBeInstanceOf(DatabaseTooNewError);
      expect(await catalogue(sql)).toEqual(before);
    });
  });

  test("every table and column of the schema exists, with the schema's SQL type", async () => {
    await withDatabase(async (url, sql) => {
      await migratePostgres(url);
      const rows = await sql`SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns WHERE table_schema IN ('public', 'analytics')`;
      const actual = Object.fromEntries(rows.map((r: { table_schema: string; table_name: string; column_name: string; data_type: string }) => [`${r.table_schema}.${r.table_name}.${r.column_name}`, r.data_type]));
      const qualified = (t: (typeof pgTables)[number]) => `${getTableConfig(t).schema ?? "public"}.${getTableName(t)}`;
      const expected = Object.fromEntries(pgTables.flatMap((t) => getTableConfig(t).columns.map((c) => [`${qualified(t)}.${c.name}`, c.getSQLType()])));
      expect(actual).toEqual(expected);
      const indexes = await sql`SELECT indexname FROM pg_indexes WHERE schemaname IN ('public', 'analytics') AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_pk'`;
      const expectedIndexes = pgTables.flatMap((t) => getTableConfig(t).indexes.map((i) => i.config.name));
      expect(indexes.map((i: { indexname: string }) => i.indexname).sort()).toEqual(expectedIndexes.sort());
    });
  });

  test("a row in each table reads back as written through the drizzle schema", async () => {
    await withDatabase(async (url, sql) => {
      await migratePostgres(url);
      const db = drizzle({ client: sql });
      await withoutUsageTriggers(sql);
      for (const { table, values } of SAMPLE_ROWS) await db.insert(table).values(values);
      for (const { table, values } of SAMPLE_ROWS) {
        const identities = Object.entries(getTableColumns(table)).filter(([, c]) => c.generatedIdentity !== undefined);
        const numbered = Object.fromEntries(identities.map(([key]) => [key, 1]));
        expect({ table: getTableName(table), rows: await db.select().from(table) }).toEqual({ table: getTableName(table), rows: [{ ...values, ...numbered }] });
      }
      // JSON is stored as its text, readable by PostgreSQL's own JSON functions.
      const meta = SAMPLE_ROWS.find((r) => r.table === pg.keys)!.values.meta as { note: string };
      const [key] = await sql`SELECT meta::jsonb ->> 'note' AS note, jsonb_typeof(meta::jsonb) AS type FROM keys`;
      expect(key).toEqual({ note: meta.note, type: "object" });
    });
  });

  test("every nullable column takes a NULL and reads it back", async () => {
    await withDatabase(async (url, sql) => {
      await migratePostgres(url);
      const db = drizzle({ client: sql });
      await withoutUsageTriggers(sql);
      for (const { table, values } of SAMPLE_ROWS) await db.insert(table).values(values);
      for (const { table } of SAMPLE_ROWS) {
        const nullable = Object.entries(getTableColumns(table)).filter(([, c]) => !c.notNull).map(([key]) => key);
        if (nullable.length === 0) continue;
        const nulls = Object.fromEntries(nullable.map((key) => [key, null]));
        await db.update(table).set(nulls);
        const [read] = await db.select().from(table);
        expect({ table: getTableName(table), read: Object.fromEntries(nullable.map((key) => [key, read![key as never]])) }).toEqual({ table: getTableName(table), read: nulls });
      }
    });
  });

  test("a unique index rejects a duplicate with SQLSTATE 23505, case-insensitively where SQLite's does, and live rows only where it is partial", async () => {
    await withDatabase(async (url, sql) => {
      await migratePostgres(url);
      const db = drizzle({ client: sql });
      await db.insert(pg.workspaces).values({ id: "ws_1", name: "Acme", createdAt: 1 });
      expect(await sqlState(db.insert(pg.workspaces).values({ id: "ws_2", name: "ACME", createdAt: 1 }))).toBe("23505");
      const identity = { workspaceId: "ws_1", externalId: "user_1", createdAt: 1 };
      await db.insert(pg.identities).values({ ...identity, id: "id_deleted", deletedAt: 2 });
      await db.insert(pg.identities).values({ ...identity, id: "id_live" });
      expect(await sqlState(db.insert(pg.identities).values({ ...identity, id: "id_live_again" }))).toBe("23505");
    });
  });
});

/** The SQLSTATE `query` fails with, or "none". */
async function sqlState(query: PromiseLike<unknown>): Promise<string> {
  try {
    await query;
    return "none";
  } catch (error) {
    const cause = (error as { cause?: { errno?: unknown } }).cause;
    return String(cause?.errno ?? (error as { errno?: unknown }).errno);
  }
}
