/**
 * `tollgate restore` end to end, with the CLI as a child process: a backup taken while serving comes
 * back in place of later changes, the replaced files kept beside; a restore beside a running serve,
 * or of a damaged or foreign file, is refused with nothing changed.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { runCli, startServe, tempDataDir } from "../support/cli.ts";
import { perTest } from "../support/cli-slots.ts";

const t = perTest();

function fresh(): { dir: string; parent: string } {
  t.data = tempDataDir();
  return t.data;
}

/** The names of the APIs in the tollgate.db at `file` (with its WAL, when one is beside it). */
function apiNames(file: string): string[] {
  const db = new Database(file);
  try {
    return db.query<{ name: string }, []>("SELECT name FROM apis ORDER BY name").all().map((r) => r.name);
  } finally {
    db.close();
  }
}

/** Every file of `dir` and its bytes, to show that nothing changed. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f)).toString("base64")]));
}

/** Serves `dir`, creates API `before`, backs up to `<parent>/backup.db`, creates API `after`; returns the root key. */
async function backupBetweenTwoApis(dir: string, parent: string): Promise<{ rootKey: string; backup: string; before: string; after: string }> {
  t.served = await startServe({ dataDir: dir });
  const rootKey = readFileSync(join(dir, "bootstrap-root-key"), "utf8").trim();
  const before = (await t.served.post("/v2/apis.createApi", { name: "before-backup" }, rootKey)).body.data.apiId;
  const backup = join(parent, "backup.db");
  expect((await runCli(["backup", backup], { dataDir: dir })).code).toBe(0);
  const after = (await t.served.post("/v2/apis.createApi", { name: "after-backup" }, rootKey)).body.data.apiId;
  return { rootKey, backup, before, after };
}

describe("restore of a backup taken while serving", () => {
  test("serve again shows the state at the backup; the replaced files are kept whole beside, without -wal/-shm at the live names", async () => {
    const { dir, parent } = fresh();
    const { rootKey, backup, before, after } = await backupBetweenTwoApis(dir, parent);
    expect(await t.served!.stop()).toBe(0);
    t.served = undefined;

    const r = await runCli(["restore", backup], { dataDir: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`restored ${backup} into ${dir}\n`);
    const files = readdirSync(dir);
    for (const name of ["tollgate.db", "analytics.db"]) {
      expect(files).not.toContain(`${name}-wal`);
      expect(files).not.toContain(`${name}-shm`);
      expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
      expect(files.filter((f) => new RegExp(`^${name}\\.replaced-\\d{8}T\\d{9}Z$`).test(f))).toHaveLength(1);
    }
    expect(files.filter((f) => f.includes(".restore-"))).toEqual([]);
    const kept = files.find((f) => f.startsWith("tollgate.db.replaced-"))!;
    // The kept copy has what was written after the backup (from its own WAL, moved along with it).
    expect(apiNames(join(dir, kept))).toEqual(["after-backup", "before-backup"]);

    t.served = await startServe({ dataDir: dir });
    expect((await t.served.post("/v2/apis.getApi", { apiId: before }, rootKey)).status).toBe(200);
    expect((await t.served.post("/v2/apis.getApi", { apiId: after }, rootKey)).status).toBe(404);
  });

  test("a data dir that does not exist yet is created and receives the backup", async () => {
    const { dir, parent } = fresh();
    const { backup } = await backupBetweenTwoApis(dir, parent);
    const other = join(parent, "other");
    expect((await runCli(["restore", backup], { dataDir: other })).code).toBe(0);
    expect(statSync(other).mode & 0o777).toBe(0o700);
    expect(apiNames(join(other, "tollgate.db"))).toEqual(["before-backup"]);
    expect(readdirSync(other).filter((f) => f.includes(".replaced-"))).toEqual([]);
  });
});

describe("restore refuses, changing nothing", () => {
  test("exit 1 while a serve holds the data dir, and the serve keeps its data", async () => {
    const { dir, parent } = fresh();
    const { rootKey, backup, after } = await backupBetweenTwoApis(dir, parent);
    const r = await runCli(["restore", backup], { dataDir: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`is in use by another tollgate serve (PID ${t.served!.pid})`);
    expect(r.stderr).toContain("stop it before restoring");
    expect(r.stdout).toBe("");
    expect(readdirSync(dir).filter((f) => f.includes(".replaced-") || f.includes(".restore-"))).toEqual([]);
    expect((await t.served!.post("/v2/apis.getApi", { apiId: after }, rootKey)).status).toBe(200);
  });

  async function stoppedWithBackup(): Promise<{ dir: string; parent: string; backup: string }> {
    const { dir, parent } = fresh();
    const { backup } = await backupBetweenTwoApis(dir, parent);
    expect(await t.served!.stop()).toBe(0);
    t.served = undefined;
    return { dir, parent, backup };
  }

  const fromBackup = (backup: string, target: string) => writeFileSync(target, readFileSync(backup));
  test.each([
    ["not a database", (_: string, target: string) => writeFileSync(target, "just some text, not SQLite at all ".repeat(200)),
      "fails its integrity check: file is not a database"],
    ["a damaged backup", (backup: string, target: string) => {
      const bytes = readFileSync(backup);
      // Garbage over every page after the first: the schema still reads, the b-trees do not.
      bytes.fill(0x5a, 4096);
      writeFileSync(target, bytes);
    }, "fails its integrity check: database disk image is malformed"],
    ["another program's database", (_: string, target: string) => {
      const db = new Database(target, { create: true });
      db.run("CREATE TABLE kept (v TEXT)");
      db.close();
    }, "is not a backup of tollgate.db: it lacks the tables __drizzle_migrations, workspaces, root_keys, apis, keys"],
    ["a database written by a newer version", (backup: string, target: string) => {
      fromBackup(backup, target);
      const db = new Database(target);
      db.run(`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES ('from-the-future', 99999999999999)`);
      db.close();
    }, "written by a newer version of tollgate"],
  ])("exit 1 for %s", async (_, make, message) => {
    const { dir, parent, backup } = await stoppedWithBackup();
    const target = join(parent, "spoilt.db");
    make(backup, target);
    // sound, so that only tollgate.db's half is wrong
    fromBackup(join(parent, "backup-analytics.db"), join(parent, "spoilt-analytics.db"));
    const before = snapshot(dir);
    const r = await runCli(["restore", target], { dataDir: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain("nothing was changed");
    expect(snapshot(dir)).toEqual(before);
  });

  test("exit 1 when the analytics half is damaged, though tollgate.db is sound", async () => {
    const { dir, parent, backup } = await stoppedWithBackup();
    writeFileSync(join(parent, "backup-analytics.db"), "not a database ".repeat(300));
    const before = snapshot(dir);
    const r = await runCli(["restore", backup], { dataDir: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("backup-analytics.db fails its integrity check: file is not a database");
    expect(snapshot(dir)).toEqual(before);
  });

  test("exit 1 for a file that does not exist, and 2 without exactly one <backup>", async () => {
    const { dir, parent } = fresh();
    const missing = await runCli(["restore", join(parent, "nope.db")], { dataDir: dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("nope.db does not exist");
    expect(existsSync(dir)).toBe(false);
    expect((await runCli(["restore"], { dataDir: dir })).code).toBe(2);
    expect((await runCli(["restore", "a.db", "b.db"], { dataDir: dir })).code).toBe(2);
  });
});
