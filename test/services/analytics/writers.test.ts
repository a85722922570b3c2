import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { EventWriteError, SqliteEventWriter, WorkerEventWriter } from "../../../src/services/analytics/index.ts";
import { toStored } from "./support.ts";
import { count, event, rollupSource, tempDb, type TempDb } from "./support.ts";
import { packEvents } from "./support.ts";

let db: TempDb;
beforeEach(() => { db = tempDb(); });
afterEach(() => { db.close(); });

/** From now on the minute rollup refuses the events of key_zz, until the returned function is called. */
function refuseKeyZz(): () => void {
  db.storage.sqlite.run(`CREATE TRIGGER refuse_zz BEFORE INSERT ON verification_rollups_minute WHEN NEW.key_id = 'key_zz'
    BEGIN SELECT RAISE(ABORT, 'refused'); END`);
  return () => db.storage.sqlite.run("DROP TRIGGER refuse_zz");
}

const committedRequestIds = () => new Set(db.storage.sqlite.query<{ request_id: string }, []>("SELECT request_id FROM verification_events").all().map((r) => r.request_id));

describe("WorkerEventWriter", () => {
  test("with autoCheckpoint false its connection leaves the WAL to a checkpointer; by default it checkpoints itself", async () => {
    // 20 commits of 1,000 events of distinct keys: well past SQLite's 1,000-frame auto-checkpoint.
    const walFramesAfterWrites = async (autoCheckpoint: boolean) => {
      const writer = new WorkerEventWriter(db.storage.sqlite.filename, { autoCheckpoint });
      try {
        for (let c = 0; c < 20; c++) {
          await writer.write(packEvents(Array.from({ length: 1_000 }, (_, i) => event({ keyId: `key_${autoCheckpoint}_${c}_${i}`, timeMs: event().timeMs + c * 60_000 }))));
        }
        // Read while the writer's connection is open: closing it checkpoints on its own. The writer
        // thread may still be folding; a checkpoint that could not run (log -1) is tried again.
        const passive = () => db.storage.sqlite.query<{ log: number }, []>("PRAGMA wal_checkpoint(PASSIVE)").get()!.log;
        let log = passive();
        for (let tries = 0; log < 0 && tries < 100; tries++) {
          await Bun.sleep(5);
          log = passive();
        }
        return log;
      } finally {
        await writer.close();
        db.storage.sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
      }
    };
    expect(await walFramesAfterWrites(false)).toBeGreaterThan(2_000);
    expect(await walFramesAfterWrites(true)).toBeLessThan(1_100);
  });

  test("writes batches from a worker thread over its own connection; rollups equal the raw events", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    try {
      const batch = Array.from({ length: 2_500 }, (_, i) => event({ keyId: `key_${i % 37}`, timeMs: event().timeMs + i * 1000, spentCredits: i % 3 }));
      await writer.write(packEvents(batch));
      await writer.write(packEvents([event({ keyId: "key_late" })]));
      expect(count(db.storage, "verification_events")).toBe(2_501);
      for (const g of ["minute", "hour", "day", "month"] as const) {
        expect(db.storage.sqlite.query(`SELECT sum("count") AS n, sum(spent_credits) AS c FROM ${rollupSource(g)}`).get())
          .toEqual({ n: 2_501, c: batch.reduce((s, e) => s + e.spentCredits, 0) });
      }
    } finally {
      await writer.close();
    }
  });

  test("stores every field of every event as the calling-thread writer does", async () => {
    const events = [
      event({ tags: ["path=/b", "path=/a"], identityId: "id_1", externalId: "acme", spentCredits: 3, latencyMs: 0.123456789 }),
      event({ keyId: "key_b", outcome: "RATE_LIMITED", requestId: "req_1", timeMs: event().timeMs + 61_000 }),
      event({ keyId: "key_c", tags: ["solo"] }),
    ];
    const rows = (storage: TempDb["storage"]) => storage.sqlite.query(
      "SELECT request_id, time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, spent_credits, latency_ms FROM verification_events ORDER BY batch_id, position",
    ).all();
    const other = tempDb();
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    try {
      await writer.write(packEvents(events));
      await new SqliteEventWriter(other.storage).write(packEvents(events));
      expect(rows(db.storage)).toHaveLength(3);
      expect(rows(db.storage)).toEqual(rows(other.storage));
    } finally {
      await writer.close();
      other.close();
    }
  });

  test("a failed write rejects with the events it did not commit", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    try {
      await writer.write(packEvents([event()]));
      db.storage.sqlite.run("ALTER TABLE verification_event_batches RENAME TO away");
      const events = [event({ keyId: "k1", tags: ["b", "a"], latencyMs: 0.5 }), event({ keyId: "k2", identityId: "id_1", externalId: "acme", spentCredits: 2 })];
      const failed = await writer.write(packEvents(events)).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(EventWriteError);
      // Every field comes back (tags as stored, sorted), so the events can be buffered again as they were.
      expect((failed as EventWriteError).unwritten.map(toStored)).toEqual(events.map(toStored));
    } finally {
      db.storage.sqlite.run("ALTER TABLE away RENAME TO verification_event_batches");
      await writer.close();
    }
  });

  test("a worker that dies fails the batches it had not answered with all their events; the next write starts a new one", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    try {
      await writer.write(packEvents([event({ keyId: "before" })]));
      const events = [event({ keyId: "k1", tags: ["b", "a"], latencyMs: 0.5 }), event({ keyId: "k2", identityId: "id_1", externalId: "acme", spentCredits: 2 })];
      // A message the worker cannot read throws out of its handler: the thread ends with an error
      // event before it takes the next message.
      (writer as unknown as { worker: Worker }).worker.postMessage({ type: "write", id: 0, events: null });
      const failed = await writer.write(packEvents(events)).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(EventWriteError);
      expect((failed as EventWriteError).unwritten.map(toStored)).toEqual(events.map(toStored));
      await writer.write(packEvents([event({ keyId: "after", tags: ["x"] })]));
      expect(db.storage.sqlite.query("SELECT key_id, tags FROM verification_events ORDER BY batch_id, position").all())
        .toEqual([{ key_id: "before", tags: "[]" }, { key_id: "after", tags: '["x"]' }]);
    } finally {
      await writer.close();
    }
  });

  test("a chunk that fails after others committed: the batch gets back the events of that chunk and every later one", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    // key_zz sorts after every other key, so the chunks before its own commit and its own fails.
    const allow = refuseKeyZz();
    try {
      // More events than one chunk holds (1,000 at most), so the writer orders them by key before cutting chunks.
      const batch = (name: string, n: number) => Array.from({ length: n }, (_, i) => event({ keyId: i >= 100 && i % 50 === 0 ? "key_zz" : `key_${(i * 7) % 97}`, requestId: `${name}_${i}` }));
      const events = batch("e", 2400);
      const failed = await writer.write(packEvents(events)).catch((e: unknown) => e);
      const returned = (failed as EventWriteError).unwritten.map((e) => e.requestId);
      const committed = committedRequestIds();
      // Each event exactly once: committed, or given back.
      expect([...returned].sort()).toEqual(events.map((e) => e.requestId).filter((id) => !committed.has(id ?? "")).sort());
      for (const e of events) if (e.keyId === "key_zz") expect(returned).toContain(e.requestId ?? "");
      expect(committed.size).toBeGreaterThan(0);
      expect(committed.size + returned.length).toBe(events.length);
    } finally {
      allow();
      await writer.close();
    }
  });

  test("more events than a chunk are ordered by key: a key's minute row is upserted about once per batch, not once per chunk", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    db.storage.sqlite.run("CREATE TABLE upserts (n INTEGER)");
    db.storage.sqlite.run("CREATE TRIGGER count_updates AFTER UPDATE ON verification_rollups_minute BEGIN INSERT INTO upserts VALUES (1); END");
    try {
      // Two keys taking turns, 1,500 events each: every chunk of 1,000 in arrival order would hold both.
      const events = Array.from({ length: 3_000 }, (_, i) => event({ keyId: i % 2 ? "key_b" : "key_a" }));
      await writer.write(packEvents(events));
      expect(db.storage.sqlite.query('SELECT key_id, "count" FROM verification_rollups_minute ORDER BY key_id').all())
        .toEqual([{ key_id: "key_a", count: 1_500 }, { key_id: "key_b", count: 1_500 }]);
      // Ordered by key, the chunks are key_a; key_a and key_b; key_b: two updates, where arrival order makes four.
      expect(count(db.storage, "upserts")).toBe(2);
    } finally {
      await writer.close();
    }
  });

  test("held batches are written with the next batch not held, ordered by key across them, and each resolves then", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    db.storage.sqlite.run("CREATE TABLE upserts (n INTEGER)");
    db.storage.sqlite.run("CREATE TRIGGER count_updates AFTER UPDATE ON verification_rollups_minute BEGIN INSERT INTO upserts VALUES (1); END");
    try {
      const settled: string[] = [];
      // Two keys taking turns in each batch: written one batch at a time, each key's row would be updated by every later batch.
      const batches = ["a", "b", "c"].map((name) => Array.from({ length: 600 }, (_, i) => event({ keyId: i % 2 ? "key_b" : "key_a", requestId: `${name}_${i}` })));
      const held = batches.slice(0, 2).map((b, i) => writer.write(packEvents(b), { hold: true }).then(() => { settled.push(`held ${i}`); }));
      // A round trip through the worker: it has taken both held batches by the time this answers.
      await writer.writeRatelimitDecisions([]);
      expect({ settled, stored: count(db.storage, "verification_events") }).toEqual({ settled: [], stored: 0 });
      await writer.write(packEvents(batches[2]!));
      await Promise.all(held);
      expect(settled.sort()).toEqual(["held 0", "held 1"]);
      expect(db.storage.sqlite.query('SELECT key_id, "count" FROM verification_rollups_minute ORDER BY key_id').all())
        .toEqual([{ key_id: "key_a", count: 900 }, { key_id: "key_b", count: 900 }]);
      // 1,800 events ordered by key are two chunks: key_a; key_a and key_b. One update, where batch by batch makes four.
      expect(count(db.storage, "upserts")).toBe(1);
    } finally {
      await writer.close();
    }
  });

  test("held batches are written without a flush once 50,000 events are held; close writes what is held", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    try {
      const batch = (from: number, n: number) => packEvents(Array.from({ length: n }, (_, i) => event({ keyId: `key_${(from + i) % 500}` })));
      await Promise.all([writer.write(batch(0, 25_000), { hold: true }), writer.write(batch(25_000, 25_000), { hold: true })]);
      expect(count(db.storage, "verification_events")).toBe(50_000);
      const last = writer.write(batch(0, 5), { hold: true });
      await writer.close();
      await last;
      expect(count(db.storage, "verification_events")).toBe(50_005);
    } finally {
      await writer.close();
    }
  });

  test("a failed write of held batches gives each batch back its own events not committed", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    const allow = refuseKeyZz();
    try {
      // key_zz sorts after every other key, so the chunks before its own commit.
      const batch = (name: string) => Array.from({ length: 800 }, (_, i) => event({ keyId: i % 40 === 39 ? "key_zz" : `key_${i % 97}`, requestId: `${name}_${i}` }));
      const [a, b] = [batch("a"), batch("b")];
      const outcomes = await Promise.all([writer.write(packEvents(a), { hold: true }), writer.write(packEvents(b))].map((p) => p.then(() => [], (e: EventWriteError) => e.unwritten.map((u) => u.requestId))));
      const committed = committedRequestIds();
      expect(committed.size).toBeGreaterThan(0);
      [a, b].forEach((events, i) => {
        // Each event exactly once: committed, or given back to its own batch.
        expect([...outcomes[i]!].sort()).toEqual(events.map((e) => e.requestId).filter((id) => !committed.has(id ?? "")).sort());
        for (const e of events) if (e.keyId === "key_zz") expect(outcomes[i]).toContain(e.requestId);
      });
    } finally {
      allow();
      await writer.close();
    }
  });

  test("close without any write starts no worker; a write after close starts a new one", async () => {
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    await writer.close();
    await writer.write(packEvents([event()]));
    await writer.close();
    expect(count(db.storage, "verification_events")).toBe(1);
  });
});
