/**
 * Copying a single box's main database into PostgreSQL (src/storage/pg/copy-from-sqlite.ts), from
 * a data dir filled through the real API: every row of every table arrives unchanged (compared
 * over whatever columns each table has on both sides, so a new table or column is covered without
 * a change here), keys verify and recoverable keys decrypt from the copied rows, identity
 * sequences continue past the copied numbers, and a target with records, a running `serve` or a
 * row PostgreSQL rejects leaves the target as it was. One server for the file; a fresh database per test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SQL } from "bun";
import { getTableName } from "drizzle-orm";
import { getTableConfig as pgTableConfig, pgTable, text as pgText } from "drizzle-orm/pg-core";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { sha256Base64 } from "../../src/lib/hashing.ts";
import { Vault } from "../../src/services/keys/vault.ts";
import { DATABASE_FILE } from "../../src/storage/data-dir.ts";
import { openStorage } from "../../src/storage/db.ts";
import { embeddedRecords } from "../../src/storage/records/index.ts";
import { answered } from "../../src/storage/work.ts";
import { DataDirInUseError } from "../../src/storage/instance-lock.ts";
import { applyMigrations } from "../../src/storage/migrate.ts";
import { copyDataDirToPostgres, TargetNotEmptyError } from "../../src/storage/pg/copy-from-sqlite.ts";
import { pgTables, planCopy, TRIGGER_KEPT_TABLES } from "../../src/storage/pg/copy-tables.ts";
import { dataKeys } from "../../src/storage/schema/index.ts";
import { startHarness } from "../support/harness.ts";
import { TestClock } from "../support/test-clock.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { buildEmbeddedDataSet, type EmbeddedDataSet } from "./embedded-data-set.ts";
import { postgresForFile } from "./pg-database.ts";

/** Small enough that every table with a few rows is sent in several INSERTs. */
const BATCH_ROWS = 2;
const COPIED_TABLES = planCopy().map((t) => t.name);
/** Compared too, though not copied: the target's triggers must count the copied rows as the source's did (bytes included). */
const COMPARED_TABLES = [...COPIED_TABLES, ...TRIGGER_KEPT_TABLES];

/** A value as text, the same for both databases: SQLite's 0/1 for booleans, integers in decimal, blobs in hex. */
function canonical(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value === "boolean") return value ? "1" : "0";
  if (value instanceof Uint8Array) return `x'${Buffer.from(value).toString("hex")}'`;
  return String(value);
}

/** Every row of a table, each column of it (whatever columns the table has), sorted. */
function canonicalRows(rows: Record<string, unknown>[]): string[] {
  return rows.map((row) => JSON.stringify(Object.keys(row).sort().map((column) => [column, canonical(row[column])]))).sort();
}

function sqliteRows(dataDir: string): Map<string, string[]> {
  const storage = openStorage(join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    return new Map(COMPARED_TABLES.map((table) => {
      const select = storage.sqlite.prepare<Record<string, unknown>, []>(`SELECT * FROM "${table}"`);
      select.safeIntegers(true);
      const rows = canonicalRows(select.all());
      select.finalize();
      return [table, rows];
    }));
  } finally {
    storage.close();
  }
}

async function pgRows(sql: SQL): Promise<Map<string, string[]>> {
  const rows = new Map<string, string[]>();
  for (const table of COMPARED_TABLES) rows.set(table, canonicalRows(await sql.unsafe(`SELECT * FROM "${table}"`)));
  return rows;
}

const rowCounts = (rows: Map<string, string[]>) => Object.fromEntries([...rows].filter(([table]) => COPIED_TABLES.includes(table)).map(([table, r]) => [table, r.length]));

describe.skipIf(skipWithout(missing.postgres(), "copying a data dir into PostgreSQL"))("copying a data dir's main database into PostgreSQL", () => {
  const pg = postgresForFile();
  let set: EmbeddedDataSet;
  let source: Map<string, string[]>;
  const scratchDirs: string[] = [];

  beforeAll(async () => {
    set = await buildEmbeddedDataSet();
    source = sqliteRows(set.dataDir);
  }, 30_000);

  afterAll(() => {
    for (const dir of [set?.dataDir ?? "", ...scratchDirs].filter(Boolean)) rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the data set's tollgate.db in a data dir of its own, to change. */
  function scratchCopy(): string {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-copy-"));
    scratchDirs.push(dir);
    copyFileSync(join(set.dataDir, DATABASE_FILE), join(dir, DATABASE_FILE));
    return dir;
  }

  test("the data set has rows in every table copied", () => {
    const empty = COPIED_TABLES.filter((table) => source.get(table)!.length === 0);
    expect(empty).toEqual([]);
  });

  test("every row of every table arrives unchanged, and the counts returned are the source's", async () => {
    const url = await pg.freshDatabase();
    const copied = await copyDataDirToPostgres(set.dataDir, url, { batchRows: BATCH_ROWS });
    // The analytics tables are copied too (copy-analytics.test.ts).
    expect(Object.fromEntries(Object.entries(copied).filter(([table]) => !table.startsWith("analytics.")))).toEqual(rowCounts(source));
    const target = await pgRows(pg.client(url));
    for (const table of COMPARED_TABLES) expect({ table, rows: target.get(table) }).toEqual({ table, rows: source.get(table) });
  });

  test("a copied key's hash matches its plaintext, and a recoverable key decrypts from the copied rows under the same master key", async () => {
    const url = await pg.freshDatabase();
    await copyDataDirToPostgres(set.dataDir, url);
    const sql = pg.client(url);
    for (const [keyId, plaintext] of set.plaintexts) {
      const [row] = await sql`SELECT hash, start FROM keys WHERE id = ${keyId}`;
      expect({ keyId, hash: row.hash, prefixed: plaintext.startsWith(row.start) }).toEqual({ keyId, hash: sha256Base64(plaintext), prefixed: true });
    }
    const [key] = await sql`SELECT workspace_id, encrypted FROM keys WHERE id = ${set.recoverableKeyId}`;
    const [dataKey] = await sql`SELECT encrypted, created_at FROM data_keys WHERE workspace_id = ${key.workspace_id}`;
    // The Vault reads data keys from SQLite: one holding only the copied row (its workspace row aside) stands in for PostgreSQL.
    const dir = mkdtempSync(join(tmpdir(), "tollgate-vault-"));
    scratchDirs.push(dir);
    const storage = openStorage(join(dir, DATABASE_FILE));
    applyMigrations(storage.sqlite);
    storage.sqlite.run("PRAGMA foreign_keys = OFF");
    storage.db.insert(dataKeys).values({ workspaceId: key.workspace_id, encrypted: dataKey.encrypted, createdAt: Number(dataKey.created_at) }).run();
    const vault = new Vault({ records: embeddedRecords(storage), clock: new TestClock(), masterKey: set.masterKey });
    answered(vault.prepare(key.workspace_id));
    expect(vault.decrypt(key.workspace_id, key.encrypted)).toBe(set.plaintexts.get(set.recoverableKeyId)!);
    storage.close();
  });

  test("identity sequences continue past the largest copied number", async () => {
    const url = await pg.freshDatabase();
    await copyDataDirToPostgres(set.dataDir, url);
    const sql = pg.client(url);
    for (const [table, column] of [["credit_journal", "id"], ["ratelimit_log", "seq"]] as const) {
      const [{ max }] = await sql.unsafe(`SELECT max(${column})::int8 AS max FROM ${table}`);
      const inserted = table === "credit_journal"
        ? await sql`INSERT INTO credit_journal (entries) VALUES ('[]') RETURNING id AS n`
        : await sql`INSERT INTO ratelimit_log (windows, expires_ms, data) VALUES (0, 0, '') RETURNING seq AS n`;
      expect({ table, next: Number(inserted[0].n) }).toEqual({ table, next: Number(max) + 1 });
    }
  });

  test("a target holding a record is refused and left unchanged; with replace it ends holding the source's rows alone", async () => {
    const url = await pg.freshDatabase();
    const sql = pg.client(url);
    await sql`INSERT INTO workspaces (id, name, created_at) VALUES ('ws_stray', 'stray', 1)`;
    const before = await pgRows(sql);
    await expect(copyDataDirToPostgres(set.dataDir, url)).rejects.toThrow(TargetNotEmptyError);
    expect(await pgRows(sql)).toEqual(before);

    await copyDataDirToPostgres(set.dataDir, url, { replace: true });
    expect(await pgRows(sql)).toEqual(source);
  });

  test("a row PostgreSQL rejects mid-copy leaves every table of the target empty", async () => {
    const dir = scratchCopy();
    const tampered = openStorage(join(dir, DATABASE_FILE));
    // A key of an identity that does not exist: SQLite lets it in with its foreign keys off.
    tampered.sqlite.run("PRAGMA foreign_keys = OFF");
    tampered.sqlite.run("UPDATE keys SET identity_id = 'id_missing' WHERE id = (SELECT max(id) FROM keys)");
    tampered.close();
    const url = await pg.freshDatabase();
    await expect(copyDataDirToPostgres(dir, url, { batchRows: BATCH_ROWS })).rejects.toThrow(/foreign key/);
    const target = await pgRows(pg.client(url));
    expect(Object.values(rowCounts(target)).every((n) => n === 0)).toBe(true);
  });

  test("a data dir held by a running serve is refused and nothing is written", async () => {
    const h = await startHarness();
    try {
      const url = await pg.freshDatabase();
      await expect(copyDataDirToPostgres(h.dataDir, url)).rejects.toThrow(DataDirInUseError);
      expect(Object.values(rowCounts(await pgRows(pg.client(url)))).every((n) => n === 0)).toBe(true);
    } finally {
      await h.stop();
    }
  });
});

describe("the copy's plan, read from the two schemas", () => {
  test("puts every table after the tables its foreign keys point to", () => {
    const order = planCopy().map((t) => t.name);
    for (const table of pgTables()) {
      const name = getTableName(table);
      if (!order.includes(name)) continue;
      for (const fk of pgTableConfig(table).foreignKeys) {
        const parent = getTableName(fk.reference().foreignTable);
        expect({ name, parentFirst: order.indexOf(parent) < order.indexOf(name) }).toEqual({ name, parentFirst: true });
      }
    }
  });

  test("refuses a SQLite column with no PostgreSQL twin instead of leaving its values behind", () => {
    const wider = sqliteTable("workspaces", { id: text("id").primaryKey(), name: text("name"), extra: integer("extra") });
    const narrower = pgTable("workspaces", { id: pgText("id").primaryKey(), name: pgText("name") });
    expect(() => planCopy([wider], [narrower])).toThrow(/extra have no PostgreSQL twin/);
  });
});
