/**
 * The data dir is private to the service's user even under a permissive umask (022): the dir
 * 0700; the databases, their -wal and -shm, master.key, bootstrap-root-key and serve.lock 0600;
 * backups 0600. A data dir of an older version (0755, files 0644) is narrowed at start, and a
 * master.key that others could read is a warning naming the file, never showing the key.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { ROOT, runCli, startServe, tempDataDir, type Program } from "../support/cli.ts";
import { perTest } from "../support/cli-slots.ts";

/** Each test starts several processes; a busy machine makes that slow. */
const CHILD_PROCESS_TEST_TIMEOUT_MS = 30_000;

/** tollgate from the sources, started by a shell that sets umask 022 first. */
const UMASK_022: Program = { command: ["sh", "-c", 'umask 022 && exec "$@"', "sh", "bun", "run", "src/main.ts"], cwd: ROOT };

const DATA_DIR_FILES = [
  "analytics.db", "analytics.db-shm", "analytics.db-wal", "bootstrap-root-key", "master.key",
  "serve.lock", "tollgate.db", "tollgate.db-shm", "tollgate.db-wal",
];

const t = perTest();

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
const modesIn = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((name) => [name, modeOf(join(dir, name))]));
const allPrivate = Object.fromEntries(DATA_DIR_FILES.map((name) => [name, "600"]));

describe("modes under umask 022", () => {
  test("a first start: the data dir 0700 and every file in it 0600; backups 0600", async () => {
    t.data = tempDataDir();
    t.served = await startServe({ dataDir: t.data.dir, program: UMASK_022 });
    expect(modeOf(t.data.dir)).toBe("700");
    expect(modesIn(t.data.dir)).toEqual(allPrivate);
    const backup = join(t.data.parent, "backup.db");
    const r = await runCli(["backup", backup], { dataDir: t.data.dir, program: UMASK_022 });
    expect(r.code).toBe(0);
    expect({ main: modeOf(backup), analytics: modeOf(join(t.data.parent, "backup-analytics.db")) }).toEqual({ main: "600", analytics: "600" });
    expect(await t.served.stop()).toBe(0);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);

  test("an older data dir (0755, files 0644) is narrowed at start; master.key readable by others is a warning naming it", async () => {
    t.data = tempDataDir();
    t.served = await startServe({ dataDir: t.data.dir, program: UMASK_022 });
    expect(await t.served.stop()).toBe(0);
    chmodSync(t.data.dir, 0o755);
    for (const name of readdirSync(t.data.dir)) chmodSync(join(t.data.dir, name), 0o644);
    const masterKey = readFileSync(join(t.data.dir, "master.key"), "utf8").trim();

    t.served = await startServe({ dataDir: t.data.dir, program: UMASK_022 });
    expect(modeOf(t.data.dir)).toBe("700");
    expect(modesIn(t.data.dir)).toEqual(allPrivate);
    const warning = await t.served.stderrLine((line) => line.includes('"level":"warn"') && line.includes("master.key"));
    expect(warning).toContain(`${join(t.data.dir, "master.key")} was readable by other users (mode 0644)`);
    expect(t.served.stderr()).not.toContain(masterKey);
    expect(await t.served.stop()).toBe(0);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);

  test("a master.key put in place 0644 before the first start: the warning, and the key is used as it is", async () => {
    t.data = tempDataDir();
    mkdirSync(t.data.dir, { mode: 0o755 });
    const masterKey = randomBytes(32).toString("base64");
    writeFileSync(join(t.data.dir, "master.key"), masterKey + "\n", { mode: 0o644 });
    chmodSync(join(t.data.dir, "master.key"), 0o644);
    t.served = await startServe({ dataDir: t.data.dir, program: UMASK_022 });
    await t.served.stderrLine((line) => line.includes(`${join(t.data!.dir, "master.key")} was readable by other users`));
    expect(readFileSync(join(t.data.dir, "master.key"), "utf8").trim()).toBe(masterKey);
    expect(modesIn(t.data.dir)).toEqual(allPrivate);
    expect(t.served.stderr()).not.toContain(masterKey);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);
});
