/**
 * The database across versions and copies, with the CLI as a child process: a database written by
 * a newer tollgate is refused (exit 78, which systemd does not restart; a clear message; nothing
 * changed), and `tollgate backup`
 * taken while serve runs restores, as the README describes, into a service that has every record.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { runCli, startServe, tempDataDir } from "../support/cli.ts";
import { perTest } from "../support/cli-slots.ts";

const t = perTest();

function fresh(): { dir: string; parent: string } {
  t.data = tempDataDir();
  return t.data;
}

const migrationRows = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.query(`SELECT id, hash, created_at FROM "__drizzle_migrations" ORDER BY id`).all();
  } finally {
    db.close();
  }
};

describe("a database written by a newer version", () => {
  test("serve and migrate exit 78 naming the problem, and leave the database as it was", async () => {
    const { dir } = fresh();
    expect((await runCli(["migrate"], { dataDir: dir })).code).toBe(0);
    const file = join(dir, "tollgate.db");
    const db = new Database(file);
    db.run(`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES ('from-the-future', 99999999999999)`);
    db.close();
    const before = migrationRows(file);

    for (const args of [["serve"], ["migrate"], ["workspace", "list"]]) {
      const r = await runCli(args, { dataDir: dir });
      expect({ args, code: r.code }).toEqual({ args, code: 78 });
      expect(r.stderr).toContain("written by a newer version of tollgate");
      expect(r.stderr).toContain("will not downgrade");
      expect(r.stderr).not.toContain("tollgate listening");
    }
    expect(migrationRows(file)).toEqual(before);
  });
});

describe("backup while serving, then restore", () => {
  test("the restored data dir serves every API and key that existed at the backup, and has its analytics", async () => {
    const { dir, parent } = fresh();
    t.served = await startServe({ dataDir: dir, env: { TOLLGATE_ANALYTICS_FLUSH_MS: "50" } });
    const rootKey = readFileSync(join(dir, "bootstrap-root-key"), "utf8").trim();
    const api = await t.served.post("/v2/apis.createApi", { name: "before-backup" }, rootKey);
    const key = await t.served.post("/v2/keys.createKey", { apiId: api.body.data.apiId, recoverable: true, credits: { remaining: 10 } }, rootKey);
    expect(key.status).toBe(200);
    expect((await t.served.post("/v2/keys.verifyKey", { key: key.body.data.key }, rootKey)).body.data.credits).toBe(9);
    // Its event written (the flush runs every 50 ms), so that the backup of analytics.db has it.
    for (let i = 0; i < 300 && eventCount(join(dir, "analytics.db")) < 1; i++) await Bun.sleep(10);
    expect(eventCount(join(dir, "analytics.db"))).toBe(1);

    const backupFile = join(parent, "tollgate-backup.db");
    const analyticsBackup = join(parent, "tollgate-backup-analytics.db");
    const backup = await runCli(["backup", backupFile], { dataDir: dir });
    expect(backup).toMatchObject({ code: 0, stdout: `${backupFile}\n` });
    expect(backup.stderr).toContain(`${join(dir, "master.key")}; keep a copy of it with the backup`);
    for (const file of [backupFile, analyticsBackup]) expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(parent).filter((f) => f.includes(".partial-"))).toEqual([]);
    // Written after the backup: must not be in the restored copy.
    const later = await t.served.post("/v2/apis.createApi", { name: "after-backup" }, rootKey);
    expect(await t.served.stop()).toBe(0);
    t.served = undefined;

    // The README's restore: a data dir with the backups as tollgate.db and analytics.db, next to the same master.key.
    const restored = join(parent, "restored");
    mkdirSync(restored, { mode: 0o700 });
    copyFileSync(backupFile, join(restored, "tollgate.db"));
    copyFileSync(analyticsBackup, join(restored, "analytics.db"));
    copyFileSync(join(dir, "master.key"), join(restored, "master.key"));
    expect(existsSync(join(restored, "tollgate.db-wal"))).toBe(false);

    t.served = await startServe({ dataDir: restored });
    expect(t.served.stderr()).not.toContain("created workspace 'default'");
    expect((await t.served.post("/v2/apis.getApi", { apiId: api.body.data.apiId }, rootKey)).status).toBe(200);
    expect((await t.served.post("/v2/apis.getApi", { apiId: later.body.data.apiId }, rootKey)).status).toBe(404);
    const verified = await t.served.post("/v2/keys.verifyKey", { key: key.body.data.key }, rootKey);
    expect(verified.body.data).toMatchObject({ valid: true, code: "VALID", credits: 8 });
    // Recoverable keys decrypt only with the master key that was restored alongside.
    const got = await t.served.post("/v2/keys.getKey", { keyId: key.body.data.keyId, decrypt: true }, rootKey);
    expect(got.body.data.plaintext).toBe(key.body.data.key);
    expect(await t.served.stop()).toBe(0);
    // The verification of the backup and the one after the restore.
    expect(eventCount(join(restored, "analytics.db"))).toBe(2);
  });
});

/** Verification events in the analytics.db at `path` (read-write: a WAL reader writes its index). */
function eventCount(path: string): number {
  if (!existsSync(path)) return 0;
  const db = new Database(path);
  try {
    return db.query<{ n: number }, []>("SELECT count(*) AS n FROM verification_events").get()?.n ?? 0;
  } finally {
    db.close();
  }
}

describe("backup refuses what it cannot copy faithfully", () => {
  test("a data dir without a database: exit 1, and nothing is created", async () => {
    const { dir, parent } = fresh();
    const r = await runCli(["backup", join(parent, "copy.db")], { dataDir: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`there is no database at ${join(dir, "tollgate.db")}`);
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(parent)).toEqual([]);
  });

  test("it copies the database as it is: it never migrates it (a newer binary must not upgrade a running older service)", async () => {
    const { dir, parent } = fresh();
    mkdirSync(dir);
    const file = join(dir, "tollgate.db");
    const db = new Database(file);
    db.run("CREATE TABLE kept (v TEXT)");
    db.run("INSERT INTO kept VALUES ('as it was')");
    db.close();
    const copy = join(parent, "copy.db");
    expect((await runCli(["backup", copy], { dataDir: dir })).code).toBe(0);
    for (const f of [file, copy]) {
      const opened = new Database(f, { readonly: true });
      try {
        expect(opened.query("SELECT name FROM sqlite_master ORDER BY name").all()).toEqual([{ name: "kept" }]);
        expect(opened.query("SELECT v FROM kept").all()).toEqual([{ v: "as it was" }]);
      } finally {
        opened.close();
      }
    }
  });
});
