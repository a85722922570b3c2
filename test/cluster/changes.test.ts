/**
 * Change notices across nodes (src/storage/pg/changes.ts) against a real PostgreSQL: watchers on
 * connections of their own see what another connection committed, never what it rolled back; a
 * lost notice is caught by the poll, also when transactions commit out of the order they recorded
 * their changes in; no change is delivered twice; concurrent changes of one workspace each insert a
 * notice of their own and wait for no other; the prune keeps each workspace's latest notice, so a
 * poll behind it still delivers every changed workspace; stop leaves nothing running.
 * Most polls are run by hand through an injected timer; the latency and the dropped-listener
 * checks run on real timers. One server for the file; a fresh database per test.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import { ChangeWatcher, MAX_POLL_MS, MIN_POLL_MS, pruneSupersededChanges, recordChange, type After } from "../../src/storage/pg/changes.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { eventually, postgresForFile } from "./pg-database.ts";

/** Timers a test fires by hand: each `after` waits in `pending` until `fire`. */
class ManualTimers {
  readonly pending: { delayMs: number; run: () => void }[] = [];
  readonly after: After = (delayMs, run) => {
    const timer = { delayMs, run };
    this.pending.push(timer);
    return () => {
      const at = this.pending.indexOf(timer);
      if (at >= 0) this.pending.splice(at, 1);
    };
  };

  fire(): void {
    for (const timer of this.pending.splice(0)) timer.run();
  }
}

/** A watcher on a client of its own, recording what it delivers and when. */
interface Watched {
  watcher: ChangeWatcher;
  sql: SQL;
  seen: { workspaceId: string; atMs: number }[];
  errors: Error[];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

describe.skipIf(skipWithout(missing.postgres(), "the cluster change notices"))("change notices across nodes", () => {
  const open: Watched[] = [];
  const pg = postgresForFile(async () => {
    for (const w of open) await w.watcher.stop();
  });
  const client = (url: string) => pg.client(url);

  async function watch(url: string, opts: { after?: After; pollMs?: number } = {}): Promise<Watched> {
    const sql = client(url);
    const w: Watched = { sql, seen: [], errors: [], watcher: undefined as never };
    w.watcher = new ChangeWatcher({ sql, ...opts, onChange: (workspaceId) => w.seen.push({ workspaceId, atMs: performance.now() }), onError: (e) => w.errors.push(e) });
    await w.watcher.start();
    open.push(w);
    return w;
  }

  /** Commits a change to `workspaceId` through a node's drizzle client; its stamp. */
  const commitChange = (db: ReturnType<typeof drizzle>, workspaceId: string) => db.transaction((tx) => recordChange(tx, workspaceId));

  /** Inserts workspaces' notice rows as recordChange does, in one transaction, without the NOTIFY: changes whose notices were lost. */
  async function commitWithoutNotice(sql: SQL, workspaceIds: string[]): Promise<void> {
    await sql.begin(async (tx) => {
      for (const id of workspaceIds) {
        await tx`INSERT INTO cluster_change_notices (workspace_id, version, tx_id) VALUES (${id}, nextval('cluster_change_version'), pg_current_xact_id()::text::int8)`;
      }
    });
  }

  const seenIds = (w: Watched) => w.seen.map((s) => s.workspaceId);

  test("three watchers each see a change committed through another connection, and never a rolled-back one", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const watchers = [await watch(url, { after: timers.after }), await watch(url, { after: timers.after }), await watch(url, { after: timers.after })];
    const db = drizzle({ client: client(url) });
    await commitChange(db, "ws_a");
    await expect(db.transaction(async (tx) => {
      await recordChange(tx, "ws_rolled_back");
      throw new Error("roll back");
    })).rejects.toThrow("roll back");
    await commitChange(db, "ws_c");
    // Notices arrive in commit order: once ws_c is seen, a notice of the rolled-back change would have been too.
    await eventually(async () => watchers.every((w) => seenIds(w).includes("ws_c")), 5000, "every watcher sees ws_c");
    for (const w of watchers) await w.watcher.poll();
    for (const w of watchers) {
      expect(seenIds(w)).toEqual(["ws_a", "ws_c"]);
      expect(w.watcher.stats()).toEqual({ notified: 2, polled: 0 });
      expect(w.errors).toEqual([]);
    }
  });

  test("notice latency over 200 changes, each seen once by each of three watchers (reported, not asserted)", async () => {
    const url = await pg.freshDatabase();
    const watchers = [await watch(url), await watch(url), await watch(url)];
    const db = drizzle({ client: client(url) });
    const latenciesMs: number[] = [];
    const commitsMs: number[] = [];
    const afterCommitMs: number[] = [];
    const CHANGES = 200;
    for (let i = 0; i < CHANGES; i++) {
      const workspaceId = `ws_${i % 20}`;
      const counts = watchers.map((w) => w.seen.length);
      const startMs = performance.now();
      await commitChange(db, workspaceId);
      commitsMs.push(performance.now() - startMs);
      await eventually(async () => watchers.every((w, j) => w.seen.length > counts[j]!), 5000, `change ${i} seen`);
      for (const [j, w] of watchers.entries()) {
        expect(w.seen.slice(counts[j])).toEqual([{ workspaceId, atMs: expect.any(Number) }]);
        latenciesMs.push(w.seen[counts[j]!]!.atMs - startMs);
        afterCommitMs.push(w.seen[counts[j]!]!.atMs - startMs - commitsMs.at(-1)!);
      }
    }
    for (const w of watchers) {
      await w.watcher.poll();
      expect(w.seen.length).toBe(CHANGES);
    }
    const summary = (samples: number[]) => {
      const sorted = samples.sort((a, b) => a - b);
      return `p50 ${percentile(sorted, 0.5).toFixed(2)} ms, p99 ${percentile(sorted, 0.99).toFixed(2)} ms, max ${sorted.at(-1)!.toFixed(2)} ms`;
    };
    console.log(`change notices: start of the writing transaction to onChange, ${latenciesMs.length} samples: ${summary(latenciesMs)}; `
      + `the writing transaction alone: ${summary(commitsMs)}; from the commit's return (negative: seen before it returned): ${summary(afterCommitMs)}; delivered by ${JSON.stringify(watchers.map((w) => w.watcher.stats()))}`);
  });

  test("a change whose notice is lost is delivered by the next poll, after pollMs, once", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after, pollMs: 250 });
    expect(timers.pending.map((t) => t.delayMs)).toEqual([250]);
    await commitWithoutNotice(client(url), ["ws_lost"]);
    expect(seenIds(w)).toEqual([]);
    timers.fire();
    // The next poll is scheduled once this one has finished.
    await eventually(async () => timers.pending.length === 1, 5000, "the next poll scheduled");
    expect(seenIds(w)).toEqual(["ws_lost"]);
    await w.watcher.poll();
    expect(seenIds(w)).toEqual(["ws_lost"]);
    expect(w.watcher.stats()).toEqual({ notified: 0, polled: 1 });
  });

  test("with its listening backend terminated, a watcher still gets a change within pollMs and a margin, and the next one once its listener is back, each once", async () => {
    const url = await pg.freshDatabase();
    const pollMs = 100;
    const w = await watch(url, { pollMs });
    const db = drizzle({ client: client(url) });
    const listeners = () => pg.admin()`SELECT pid FROM pg_stat_activity WHERE datname = ${new URL(url).pathname.slice(1)} AND query ILIKE 'LISTEN%'`;
    const [listener] = await listeners();
    const startMs = performance.now();
    await db.transaction(async (tx) => {
      await pg.admin()`SELECT pg_terminate_backend(${listener.pid}::int4)`;
      await recordChange(tx, "ws_after_drop");
    });
    const committedMs = performance.now();
    await eventually(async () => seenIds(w).includes("ws_after_drop"), 5000, "the change seen");
    const deliveredMs = w.seen[0]!.atMs - startMs;
    const afterCommitMs = w.seen[0]!.atMs - committedMs;
    const path = w.watcher.stats();
    // Once the listener is back, notices flow again.
    await eventually(async () => (await listeners()).some((r: { pid: number }) => r.pid !== listener.pid), 5000, "the listener reconnected");
    await commitChange(db, "ws_after_reconnect");
    await eventually(async () => seenIds(w).includes("ws_after_reconnect"), 5000, "the next change seen");
    await w.watcher.poll();
    console.log(`change after the listener was terminated: seen ${deliveredMs.toFixed(1)} ms after the terminating transaction began, ${afterCommitMs.toFixed(1)} ms after its commit returned (pollMs ${pollMs}), delivered by ${JSON.stringify(path)}`);
    expect(deliveredMs).toBeLessThan(pollMs + 400);
    expect(seenIds(w)).toEqual(["ws_after_drop", "ws_after_reconnect"]);
  });

  test("a notice repeated, or of a version the poll delivered, is not delivered again", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after });
    const sql = client(url);
    const stamp = await commitChange(drizzle({ client: sql }), "ws_notified");
    await eventually(async () => w.seen.length === 1, 5000, "the notice delivered");
    await commitWithoutNotice(sql, ["ws_polled"]);
    await w.watcher.poll();
    expect(seenIds(w)).toEqual(["ws_notified", "ws_polled"]);
    const [polled] = await sql`SELECT version::int8 AS version, tx_id::int8 AS "txId" FROM cluster_change_notices WHERE workspace_id = 'ws_polled'`;
    await sql.notify("tollgate_changes", JSON.stringify({ workspaceId: "ws_notified", ...stamp }));
    await sql.notify("tollgate_changes", JSON.stringify({ workspaceId: "ws_polled", version: Number(polled.version), txId: Number(polled.txId) }));
    await commitChange(drizzle({ client: sql }), "ws_marker");
    await eventually(async () => seenIds(w).includes("ws_marker"), 5000, "the marker seen");
    expect(seenIds(w)).toEqual(["ws_notified", "ws_polled", "ws_marker"]);
  });

  test("a change the watcher's own node recorded is delivered neither by its notice nor by a poll; others' still are", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after });
    const sql = client(url);
    const db = drizzle({ client: sql });
    await db.transaction(async (tx) => {
      w.watcher.ownChange(await recordChange(tx, "ws_own"));
    });
    await commitChange(db, "ws_other");
    await eventually(async () => seenIds(w).includes("ws_other"), 5000, "the other node's change seen");
    await w.watcher.poll();
    expect(seenIds(w)).toEqual(["ws_other"]);
  });

  test("one poll delivers a burst larger than its query's batch, each workspace once", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after });
    const ids = Array.from({ length: 2500 }, (_, i) => `ws_${i}`);
    await commitWithoutNotice(client(url), ids);
    await w.watcher.poll();
    expect(seenIds(w)).toEqual(ids);
  });

  test("changes of one workspace in concurrent transactions each insert a notice; one poll delivers the workspace once", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after });
    const sql = client(url);
    const db = drizzle({ client: sql });
    // READ COMMITTED, as the record stores run: no transaction waits on a row of another.
    const stamps = await Promise.all(Array.from({ length: 8 }, () => db.transaction((tx) => recordChange(tx, "ws_hot"), { isolationLevel: "read committed" })));
    expect(new Set(stamps.map((s) => s.version)).size).toBe(8);
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM cluster_change_notices WHERE workspace_id = 'ws_hot'`;
    expect(n).toBe(8);
    await w.watcher.stop();
    const behind = await watch(url, { after: timers.after });
    await commitWithoutNotice(sql, ["ws_hot", "ws_hot", "ws_cold", "ws_hot"]);
    await behind.watcher.poll();
    expect(seenIds(behind)).toEqual(["ws_hot", "ws_cold"]);
  });

  test("a change committed after a later-started one, its notice lost, is still delivered by the next poll", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after });
    const sql = client(url);
    let commitSlow!: () => void;
    const slowHeld = new Promise<void>((resolve) => { commitSlow = resolve; });
    let recorded!: () => void;
    const slowRecorded = new Promise<void>((resolve) => { recorded = resolve; });
    // The slow transaction takes the smaller version and transaction id, then waits to commit.
    const slow = sql.begin(async (tx) => {
      await tx`INSERT INTO cluster_change_notices (workspace_id, version, tx_id) VALUES ('ws_slow', nextval('cluster_change_version'), pg_current_xact_id()::text::int8)`;
      recorded();
      await slowHeld;
    });
    await slowRecorded;
    await commitWithoutNotice(sql, ["ws_fast"]);
    await w.watcher.poll();
    expect(seenIds(w)).toEqual(["ws_fast"]);
    commitSlow();
    await slow;
    await w.watcher.poll();
    await w.watcher.poll();
    expect(seenIds(w)).toEqual(["ws_fast", "ws_slow"]);
  });

  test("the prune keeps each workspace's latest notice, and a poll behind it still delivers every changed workspace", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after });
    const sql = client(url);
    for (const id of ["ws_a", "ws_b", "ws_a", "ws_c", "ws_a", "ws_b"]) await commitWithoutNotice(sql, [id]);
    expect(await pruneSupersededChanges(sql)).toBe(3);
    const rows = await sql`SELECT workspace_id, version::text AS v FROM cluster_change_notices ORDER BY version`;
    expect(rows.map((r: { workspace_id: string }) => r.workspace_id)).toEqual(["ws_c", "ws_a", "ws_b"]);
    expect(await pruneSupersededChanges(sql)).toBe(0);
    await w.watcher.poll();
    expect(seenIds(w).sort()).toEqual(["ws_a", "ws_b", "ws_c"]);
  });

  test("stop ends the listening connection and the timer", async () => {
    const url = await pg.freshDatabase();
    const timers = new ManualTimers();
    const w = await watch(url, { after: timers.after });
    const database = new URL(url).pathname.slice(1);
    const listening = async () => (await pg.admin()`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${database} AND query ILIKE 'LISTEN%'`)[0].n;
    expect(await listening()).toBe(1);
    await w.watcher.stop();
    expect(timers.pending).toEqual([]);
    await eventually(async () => (await listening()) === 0, 5000, "the listening connection closed");
  });

  test("pollMs outside its bounds is refused", () => {
    const sql = new SQL("postgres://nobody@127.0.0.1:1/none");
    const make = (pollMs: number) => () => new ChangeWatcher({ sql, pollMs, onChange: () => undefined });
    for (const bad of [0, MIN_POLL_MS - 1, 100.5, MAX_POLL_MS + 1, Number.NaN]) expect(make(bad)).toThrow(RangeError);
    for (const good of [MIN_POLL_MS, 100, MAX_POLL_MS]) expect(make(good)).not.toThrow();
  });
});
