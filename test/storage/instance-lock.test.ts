/**
 * The data dir's lock inside one process (tests boot several instances in one): a second lock or
 * boot() on a held data dir fails naming it and this process, the first keeps serving, and stop()
 * (Harness.restart) or a failed start releases it. Across processes: test/cli/instance.test.ts.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boot } from "../../src/boot.ts";
import { loadConfig } from "../../src/config.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { DataDirInUseError, lockDataDir, LOCK_FILE } from "../../src/storage/instance-lock.ts";
import { startHarness, type Harness } from "../support/harness.ts";

let h: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function emptyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-lock-"));
  dirs.push(dir);
  return dir;
}

/** What a lock attempt threw, or undefined. */
function lockFailure(dir: string): unknown {
  try {
    lockDataDir(dir).release();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe("lockDataDir", () => {
  test("a held data dir: DataDirInUseError naming the dir and the holder's PID; free again after release", () => {
    const dir = emptyDir();
    const lock = lockDataDir(dir);
    const error = lockFailure(dir);
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect({ dataDir: (error as DataDirInUseError).dataDir, holderPid: (error as DataDirInUseError).holderPid }).toEqual({ dataDir: dir, holderPid: process.pid });
    expect((error as Error).message).toContain(`${dir} is in use`);
    expect((error as Error).message).toContain(`PID ${process.pid}`);
    lock.release();
    lock.release();
    expect(lockFailure(dir)).toBeUndefined();
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
  });
});

describe("boot on a data dir in use", () => {
  test("a second boot() throws DataDirInUseError; the first keeps serving; restart() boots again", async () => {
    h = await startHarness();
    const config = loadConfig({ TOLLGATE_DATA_DIR: h.dataDir, TOLLGATE_PORT: "0" });
    await expect(boot({ config, logger: silentLogger })).rejects.toBeInstanceOf(DataDirInUseError);
    expect((await h.post("/v2/apis.createApi", { name: "still-served" })).status).toBe(200);
    await h.restart();
    expect((await h.post("/v2/apis.createApi", { name: "after-restart" })).status).toBe(200);
  });

  test("a start that fails on an address in use releases the lock: the next boot on the data dir starts", async () => {
    h = await startHarness();
    const dir = emptyDir();
    const taken = loadConfig({ TOLLGATE_DATA_DIR: dir, TOLLGATE_PORT: String(h.running.port) });
    await expect(boot({ config: taken, logger: silentLogger })).rejects.toThrow(`cannot listen on 127.0.0.1:${h.running.port}: address in use`);
    const running = await boot({ config: loadConfig({ TOLLGATE_DATA_DIR: dir, TOLLGATE_PORT: "0" }), logger: silentLogger });
    await running.stop();
  });
});
