/**
 * The WAL stays bounded under sustained writes. A passive checkpoint copies frames but never
 * restarts the WAL; only a writer that begins when no connection reads from the WAL does, and with
 * reads always overlapping, that moment is rare: it comes only when a reader happens to begin
 * right after a checkpoint that copied every frame (it then reads the database file alone), so the
 * WAL grows by commit after commit. The checkpointer restarts it with a RESTART checkpoint once it
 * holds `restartAtFrames` frames, and the next writer cuts the file back (here to nothing, by its
 * journal_size_limit of 0).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../src/storage/db.ts";
import { Checkpointer } from "../../src/storage/checkpointer.ts";

const PAGE_BYTES = 4096;
const RESTART_AT_FRAMES = 256;

const dirs: string[] = [];
afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }); });

interface LoadOutcome {
  writes: number;
  /** Times the WAL file was found smaller than after the write before. */
  emptied: number;
  maxWalBytes: number;
}

/**
 * Commits one page-sized row at a time, with the overlapping readers running and a checkpointer
 * passing every 2 ms, until the WAL has been emptied `emptiedTarget` times or `maxWrites` are done.
 * One commit per turn of the event loop, as the service's main thread commits (credit spends are
 * group-committed per turn): a loop that commits back to back holds the write lock almost without
 * a gap, which no writer of the service does, and on a loaded machine the RESTART then never got
 * the lock.
 */
async function sustainedWrites(restartAtFrames: number, maxWrites: number, emptiedTarget: number): Promise<LoadOutcome> {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-wal-"));
  dirs.push(dir);
  const path = join(dir, "tollgate.db");
  const storage = openStorage(path);
  storage.sqlite.run("PRAGMA wal_autocheckpoint = 0");
  // A writer that restarts the WAL also cuts its file back, so every restart, whoever makes it, shows.
  storage.sqlite.run("PRAGMA journal_size_limit = 0");
  storage.sqlite.run("CREATE TABLE probe (data BLOB)");
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const readers = new Worker(new URL("../support/overlapping-readers.ts", import.meta.url));
  const said = (what: string) => new Promise<void>((resolve) => readers.addEventListener("message", (e) => { if (e.data === what) resolve(); }));
  const reading = said("reading");
  readers.postMessage({ path, stop });
  await reading;
  const checkpointer = new Checkpointer(path, { intervalMs: 2, restartAtFrames, restartBusyTimeoutMs: 2000 });
  const walBytes = () => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  const insert = storage.sqlite.query("INSERT INTO probe VALUES (randomblob(3000))");
  const outcome: LoadOutcome = { writes: 0, emptied: 0, maxWalBytes: 0 };
  let last = walBytes();
  try {
    while (outcome.writes < maxWrites && outcome.emptied < emptiedTarget) {
      insert.run();
      outcome.writes++;
      await new Promise((resolve) => setImmediate(resolve));
      const now = walBytes();
      if (now < last) outcome.emptied++;
      outcome.maxWalBytes = Math.max(outcome.maxWalBytes, now);
      last = now;
    }
  } finally {
    const stopped = said("stopped");
    Atomics.store(stop, 0, 1);
    await stopped;
    readers.terminate();
    await checkpointer.stop();
    storage.close();
  }
  return outcome;
}

describe("the WAL under sustained writes with reads overlapping", () => {
  test("with passive checkpoints alone it grows far past the restart bound (what the checkpointer must prevent)", async () => {
    // Not "never emptied": on a loaded machine a reader now and then begins just after a complete
    // passive checkpoint, and the next writer restarts the WAL (once in 991 writes, in one run).
    const outcome = await sustainedWrites(Number.POSITIVE_INFINITY, 3000, Number.POSITIVE_INFINITY);
    expect(outcome.writes).toBe(3000);
    expect(outcome.maxWalBytes).toBeGreaterThan(2 * RESTART_AT_FRAMES * PAGE_BYTES);
  });

  test("the checkpointer empties it again and again once it holds restartAtFrames frames", async () => {
    const outcome = await sustainedWrites(RESTART_AT_FRAMES, 20_000, 3);
    expect(outcome.emptied).toBe(3);
    expect(outcome.writes).toBeLessThan(20_000);
  });
});
