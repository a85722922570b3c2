/**
 * WAL checkpoints happen on the checkpointer's thread, never inside a commit of the service's own
 * connection: a commit past SQLite's auto-checkpoint threshold leaves tollgate.db as it was, and
 * the checkpointer then copies the pages in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { startHarness, type Harness } from "../support/harness.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.stop(); });

const dbBytes = () => statSync(join(h.dataDir, "tollgate.db")).size;

/** Polls `check` on the real clock until it holds or `ms` pass: the checkpointer is a real thread. */
async function eventually(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (check()) return true;
    await Bun.sleep(20);
  }
  return check();
}

describe("checkpoints", () => {
  test("a commit of 2,000 pages does not checkpoint; the checkpointer's thread does, within seconds", async () => {
    const { sqlite } = h.embedded.storage;
    expect(sqlite.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 0 });
    const before = dbBytes();
    sqlite.run("CREATE TABLE checkpoint_probe (data BLOB)");
    const insert = sqlite.query("INSERT INTO checkpoint_probe VALUES (randomblob(4000))");
    sqlite.transaction(() => { for (let i = 0; i < 2000; i++) insert.run(); })();
    expect(dbBytes()).toBe(before);
    expect(await eventually(() => dbBytes() > before + 4000 * 1900, 10_000)).toBe(true);
  });
});
