/**
 * The data dir is private to the service's user even under a permissive umask (022): the dir
 * 0700; the databases, their -wal and -shm, master.key, bootstrap-root-key and serve.lock 0600;
 * backups 0600. A data dir of an older version (0755, files 0644) is narrowed at start, and a
 * master.key that others could read is a warning naming the file, never showing the key.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { ROOT, runCli, startServe, tempDataDir, type Program, type Served } from "../support/cli.ts";

/** Each test starts several processes; a busy machine makes that slow. */
const CHILD_PROCESS_TEST_TIMEOUT_MS = 30_000;

/** tollgate from the sources, started by a shell that sets umask 022 first. */
const UMASK_022: Program = { command: ["sh", "-c", 'umask 022 && exec "$@"', "sh", "bun", "run", "src/main.ts"], cwd: ROOT };

const DATA_DIR_FILES = [
  "analytics.db", "analytics.db-shm", "analytics.db-wal", "bootstrap-root-key", "master.key",
  "serve.lock", "tollgate.db", "tollgate.db-shm", "tollgate.db-wal",
];

let data: ReturnType<typeof tempDataDir> | undefined;
let served: Served | undefined;
afterEach(() => {
  served?.kill();
  served = undefined;
  data?.cleanup();
  data = undefined;
});

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
const modesIn = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((name) => [name, modeOf(join(dir, name))]));
const allPrivate = Object.fromEntries(DATA_DIR_FILES.map((name) => [name, "600"]));

describe("modes under umask 022", () => {
  test("a first start: the data dir 0700 and every file in it 0600; backups 0600", async () => {
    data = tempDataDir();
    served = await startServe({ dataDir: data.dir, program: UMASK_022 });
    expect(modeOf(data.dir)).toBe("700");
    expect(modesIn(data.dir)).toEqual(allPrivate);
    const backup = join(data.parent, "backup.db");
    const r = await runCli(["backup", backup], { dataDir: data.dir, program: UMASK_022 });
    expect(r.code).toBe(0);
    expect({ main: modeOf(backup), analytics: modeOf(join(data.parent, "backup-analytics.db")) }).toEqual({ main: "600", analytics: "600" });
    expect(await served.stop()).toBe(0);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);

  test("an older data dir (0755, files 0644) is narrowed at start; master.key readable by others is a warning naming it", async () => {
    data = tempDataDir();
    served = await startServe({ dataDir: data.dir, program: UMASK_022 });
    expect(await served.stop()).toBe(0);
    chmodSync(data.dir, 0o755);
    for (const name of readdirSync(data.dir)) chmodSync(join(data.dir, name), 0o644);
    const masterKey = readFileSync(join(data.dir, "master.key"), "utf8").trim();

    served = await startServe({ dataDir: data.dir, program: UMASK_022 });
    expect(modeOf(data.dir)).toBe("700");
    expect(modesIn(data.dir)).toEqual(allPrivate);
    const warning = await served.stderrLine((line) => line.includes('"level":"warn"') && line.includes("master.key"));
    expect(warning).toContain(`${join(data.dir, "master.key")} was readable by other users (mode 0644)`);
    expect(served.stderr()).not.toContain(masterKey);
    expect(await served.stop()).toBe(0);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);

  test("a master.key put in place 0644 before the first start: the warning, and the key is used as it is", async () => {
    data = tempDataDir();
    mkdirSync(data.dir, { mode: 0o755 });
    const masterKey = randomBytes(32).toString("base64");
    writeFileSync(join(data.dir, "master.key"), masterKey + "\n", { mode: 0o644 });
    chmodSync(join(data.dir, "master.key"), 0o644);
    served = await startServe({ dataDir: data.dir, program: UMASK_022 });
    await served.stderrLine((line) => line.includes(`${join(data!.dir, "master.key")} was readable by other users`));
    expect(readFileSync(join(data.dir, "master.key"), "utf8").trim()).toBe(masterKey);
    expect(modesIn(data.dir)).toEqual(allPrivate);
    expect(served.stderr()).not.toContain(masterKey);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);
});
