/** ExternalCommits: another connection's commits are seen (once), our own are not, and looks are at most one a millisecond. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExternalCommits } from "../../src/storage/external-commits.ts";

let dir: string;
let ours: Database;
let theirs: Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tollgate-external-commits-"));
  ours = new Database(join(dir, "t.db"), { create: true });
  ours.run("PRAGMA journal_mode = WAL");
  ours.run("CREATE TABLE t (x)");
  theirs = new Database(join(dir, "t.db"));
});
afterEach(() => {
  ours.close();
  theirs.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a commit of another connection calls onCommit on the next look, once; our own commits and checkpoints do not", () => {
  let wallMs = 0;
  let calls = 0;
  const watch = new ExternalCommits(ours, () => calls++, () => wallMs);
  watch.look();
  expect(calls).toBe(0);
  ours.run("INSERT INTO t VALUES (1)");
  theirs.run("PRAGMA wal_checkpoint(PASSIVE)");
  wallMs += 1;
  watch.look();
  expect(calls).toBe(0);
  theirs.run("INSERT INTO t VALUES (2)");
  wallMs += 1;
  watch.look();
  expect(calls).toBe(1);
  wallMs += 1;
  watch.look();
  expect(calls).toBe(1);
});

test("within a millisecond of the last look, a look reads nothing", () => {
  let wallMs = 0;
  let calls = 0;
  const watch = new ExternalCommits(ours, () => calls++, () => wallMs);
  watch.look();
  theirs.run("INSERT INTO t VALUES (1)");
  wallMs += 0.5;
  watch.look();
  expect(calls).toBe(0);
  wallMs += 0.5;
  watch.look();
  expect(calls).toBe(1);
});
