import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../src/storage/db.ts";
import { applyMigrations, DatabaseTooNewError } from "../../src/storage/migrate.ts";
import { ANALYTICS_JOURNAL_TAGS, ANALYTICS_MIGRATIONS, JOURNAL_TAGS, MIGRATIONS } from "../../src/storage/migrations.ts";

const dirs: string[] = [];
function freshDb() {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-migrate-"));
  dirs.push(dir);
  return openStorage(join(dir, "tollgate.db"));
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("every migration in the journal is embedded, in journal order", () => {
  expect(MIGRATIONS.map((m) => m.tag)).toEqual(JOURNAL_TAGS);
  const files = [...new Bun.Glob("*.sql").scanSync(join(import.meta.dir, "../../migrations"))].sort();
  expect(files).toEqual(JOURNAL_TAGS.map((t) => `${t}.sql`));
  // analytics.db's, from their own folder.
  expect(ANALYTICS_MIGRATIONS.map((m) => m.tag)).toEqual(ANALYTICS_JOURNAL_TAGS);
  const analyticsFiles = [...new Bun.Glob("*.sql").scanSync(join(import.meta.dir, "../../migrations/analytics"))].sort();
  expect(analyticsFiles).toEqual(ANALYTICS_JOURNAL_TAGS.map((t) => `${t}.sql`));
});

test("applies every migration once, then nothing", () => {
  const s = freshDb();
  try {
    expect(applyMigrations(s.sqlite)).toEqual(JOURNAL_TAGS);
    expect(applyMigrations(s.sqlite)).toEqual([]);
    const rows = s.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM "__drizzle_migrations"`).get();
    expect(rows?.n).toBe(JOURNAL_TAGS.length);
  } finally {
    s.close();
  }
});

test("the connection runs in WAL mode with foreign keys on", () => {
  const s = freshDb();
  try {
    expect(s.sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    expect(s.sqlite.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
    expect(s.sqlite.query<{ synchronous: number }, []>("PRAGMA synchronous").get()?.synchronous).toBe(1);
    expect(s.sqlite.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()?.timeout).toBe(5000);
  } finally {
    s.close();
  }
});

test("two connections migrating the same empty file apply each migration once", () => {
  const a = freshDb();
  const b = openStorage(a.sqlite.filename);
  try {
    const first = applyMigrations(a.sqlite);
    const second = applyMigrations(b.sqlite);
    expect([...first, ...second]).toEqual(JOURNAL_TAGS);
  } finally {
    a.close();
    b.close();
  }
});

test("a database with a migration this version does not know is refused before anything changes", () => {
  const s = freshDb();
  try {
    applyMigrations(s.sqlite);
    const future = Math.max(...MIGRATIONS.map((m) => m.createdAt)) + 1;
    s.sqlite.run(`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES ('from-a-newer-version', ?)`, [future]);
    const before = s.sqlite.query(`SELECT * FROM "__drizzle_migrations" ORDER BY id`).all();
    expect(() => applyMigrations(s.sqlite)).toThrow(DatabaseTooNewError);
    expect(() => applyMigrations(s.sqlite)).toThrow(/newer version of tollgate.*will not downgrade/);
    expect(s.sqlite.query(`SELECT * FROM "__drizzle_migrations" ORDER BY id`).all()).toEqual(before);
  } finally {
    s.close();
  }
});

test("an older program's migrations may be missing from the database (they are applied), never extra ones", () => {
  const s = freshDb();
  try {
    const firstOnly = MIGRATIONS.slice(0, 1);
    expect(applyMigrations(s.sqlite, firstOnly)).toEqual(firstOnly.map((m) => m.tag));
    expect(applyMigrations(s.sqlite)).toEqual(JOURNAL_TAGS.slice(1));
  } finally {
    s.close();
  }
});
