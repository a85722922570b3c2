import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { EventWriteError, SqliteEventWriter, VerificationEventSink, type EventBatchWriter } from "../../../src/services/analytics/index.ts";
import { packedCount, unpackRecords, type PackedEvents } from "../../../src/services/analytics/packed-events.ts";
import { count, event, tempDb, type TempDb } from "./support.ts";

let db: TempDb;
beforeEach(() => { db = tempDb(); });
afterEach(() => { db.close(); });

const ROLLUPS = ["verification_rollups_minute", "verification_rollups_hour", "verification_rollups_day", "verification_rollups_month"];
const sinkOf = (maxBuffered?: number) => new VerificationEventSink({ writer: new SqliteEventWriter(db.storage), ...(maxBuffered ? { maxBuffered } : {}) });
const keyIds = () => db.storage.sqlite.query<{ key_id: string }, []>("SELECT key_id FROM verification_events ORDER BY batch_id, position").all().map((r) => r.key_id);

/** Moves the raw table away, so every write fails until `restore`. */
function breakWrites(): { restore(): void } {
  db.storage.sqlite.run("ALTER TABLE verification_event_batches RENAME TO verification_events_away");
  return { restore: () => db.storage.sqlite.run("ALTER TABLE verification_events_away RENAME TO verification_event_batches") };
}

describe("record and flush", () => {
  test("recording only buffers; flush writes the raw events and every rollup", async () => {
    const sink = sinkOf();
    sink.record(event());
    sink.record(event({ outcome: "DISABLED" }));
    expect(sink.pending).toBe(2);
    expect(count(db.storage, "verification_events")).toBe(0);
    expect(await sink.flush()).toBe(2);
    expect(sink.pending).toBe(0);
    expect(count(db.storage, "verification_events")).toBe(2);
    for (const table of ROLLUPS) expect(count(db.storage, table)).toBe(2);
  });

  test("the stored row: every field, tags sorted into JSON, '' for no identity and no request id", async () => {
    const sink = sinkOf();
    sink.record(event({ tags: ["region=eu", "path=/b", "path=/a"], identityId: "id_1", externalId: "acme", spentCredits: 3, latencyMs: 0.25 }));
    sink.record(event({ keyId: "key_b" }));
    await sink.flush();
    const rows = db.storage.sqlite.query("SELECT request_id, time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, spent_credits, latency_ms FROM verification_events ORDER BY batch_id, position").all();
    expect(rows).toEqual([
      { request_id: "", time: event().timeMs, workspace_id: "ws_a", key_space_id: "ks_a", key_id: "key_a", identity_id: "id_1", external_id: "acme", outcome: "VALID", tags: '["path=/a","path=/b","region=eu"]', spent_credits: 3, latency_ms: 0.25 },
      { request_id: "", time: event().timeMs, workspace_id: "ws_a", key_space_id: "ks_a", key_id: "key_b", identity_id: "", external_id: "", outcome: "VALID", tags: "[]", spent_credits: 0, latency_ms: 1 },
    ]);
  });

  test("the same tags in another order count in the same rollup row", async () => {
    const sink = sinkOf();
    sink.record(event({ tags: ["b", "a"] }));
    sink.record(event({ tags: ["a", "b"] }));
    await sink.flush();
    expect(db.storage.sqlite.query('SELECT tags, "count" FROM verification_rollups_minute').all()).toEqual([{ tags: '["a","b"]', count: 2 }]);
  });

  test("later batches add to existing rollup rows (upsert): count, credits, latency sum and max", async () => {
    const sink = sinkOf();
    sink.record(event({ spentCredits: 2, latencyMs: 3 }));
    await sink.flush();
    sink.record(event({ spentCredits: 5, latencyMs: 1 }));
    sink.record(event({ spentCredits: 0, latencyMs: 7 }));
    await sink.flush();
    for (const table of ROLLUPS) {
      expect(db.storage.sqlite.query(`SELECT "count", spent_credits, latency_sum_ms, latency_max_ms FROM ${table}`).all())
        .toEqual([{ count: 3, spent_credits: 7, latency_sum_ms: 11, latency_max_ms: 7 }]);
    }
  });

  test("an empty flush writes nothing", async () => {
    expect(await sinkOf().flush()).toBe(0);
  });

  test("a flush waits for batches another flush handed over before it, also when nothing new is buffered", async () => {
    const releases: Array<() => void> = [];
    const held: EventBatchWriter = { write: () => new Promise<void>((resolve) => { releases.push(resolve); }), close: () => Promise.resolve() };
    const sink = new VerificationEventSink({ writer: held });
    const done: string[] = [];
    sink.record(event());
    const first = sink.flush().then(() => done.push("first"));
    sink.record(event());
    const second = sink.flush().then(() => done.push("second"));
    sink.record(event());
    const third = sink.flush().then(() => done.push("third"));
    const empty = sink.flush().then(() => done.push("empty"));
    await Bun.sleep(0);
    expect(done).toEqual([]);
    // The later batches are committed first (a writer answering out of order): they wait for the first.
    releases[2]!();
    releases[1]!();
    await Bun.sleep(0);
    expect(done).toEqual([]);
    releases[0]!();
    await Promise.all([first, second, third, empty]);
    expect(done.sort()).toEqual(["empty", "first", "second", "third"]);
  });
});

describe("failures", () => {
  test("a failed flush keeps the events for the next one, ahead of newer ones", async () => {
    const sink = sinkOf();
    sink.record(event({ keyId: "key_1" }));
    const broken = breakWrites();
    await expect(sink.flush()).rejects.toBeInstanceOf(EventWriteError);
    sink.record(event({ keyId: "key_2" }));
    expect(sink.pending).toBe(2);
    broken.restore();
    expect(await sink.flush()).toBe(2);
    expect(keyIds()).toEqual(["key_1", "key_2"]);
    // The failed transaction wrote nothing, so rollups hold each event once.
    expect(db.storage.sqlite.query('SELECT sum("count") AS n FROM verification_rollups_day').get()).toEqual({ n: 2 });
  });

  test("only what the writer did not commit is buffered again", async () => {
    const partly: EventBatchWriter = {
      write: (batch: PackedEvents) => Promise.reject(new EventWriteError("half", unpackRecords(batch).slice(1))),
      close: () => Promise.resolve(),
    };
    const sink = new VerificationEventSink({ writer: partly });
    sink.record(event({ keyId: "key_1" }));
    sink.record(event({ keyId: "key_2" }));
    await sink.flush().catch(() => {});
    expect(sink.pending).toBe(1);
  });

  test("a writer that throws before taking the batch: every event is buffered again", async () => {
    let broken = true;
    const written: string[] = [];
    const throwing: EventBatchWriter = {
      write: (batch: PackedEvents) => {
        if (broken) throw new Error("not now");
        written.push(...unpackRecords(batch).map((e) => e.keyId));
        return Promise.resolve();
      },
      close: () => Promise.resolve(),
    };
    const sink = new VerificationEventSink({ writer: throwing });
    sink.record(event({ keyId: "key_1" }));
    sink.record(event({ keyId: "key_2" }));
    await expect(sink.flush()).rejects.toBeInstanceOf(EventWriteError);
    expect(sink.pending).toBe(2);
    broken = false;
    expect(await sink.flush()).toBe(2);
    expect(written).toEqual(["key_1", "key_2"]);
  });

  test("a writer that fails without naming what it did not commit: the batch is counted as dropped, not lost silently", async () => {
    const unnamed: EventBatchWriter = { write: () => Promise.reject(new Error("gone")), close: () => Promise.resolve() };
    const sink = new VerificationEventSink({ writer: unnamed });
    sink.record(event());
    sink.record(event());
    await expect(sink.flush()).rejects.toThrow("gone");
    expect(sink.pending).toBe(0);
    expect(sink.takeDropped()).toBe(2);
  });
});

describe("bounded buffer", () => {
  test("reaching the bound hands the buffer to the writer at once, inside record; nothing is dropped", () => {
    const sink = sinkOf(3);
    sink.record(event());
    sink.record(event());
    expect(count(db.storage, "verification_events")).toBe(0);
    sink.record(event());
    expect(count(db.storage, "verification_events")).toBe(3);
    expect(sink.takeDropped()).toBe(0);
  });

  test("when the writer fails, a full buffer drops its oldest half and counts it, so verification never fails", async () => {
    const sink = sinkOf(4);
    const broken = breakWrites();
    await sink.flush();
    sink.record(event({ keyId: "key_0" }));
    await sink.flush().catch(() => {});
    for (let i = 1; i < 4; i++) sink.record(event({ keyId: `key_${i}` }));
    expect(sink.pending).toBe(2);
    expect(sink.takeDropped()).toBe(2);
    expect(sink.takeDropped()).toBe(0);
    broken.restore();
    await sink.flush();
    expect(keyIds()).toEqual(["key_2", "key_3"]);
  });

  test("when the writer still holds a full buffer, a second one is dropped by half rather than piling up", async () => {
    let release = () => {};
    const slow: EventBatchWriter = { write: () => new Promise<void>((resolve) => { release = resolve; }), close: () => Promise.resolve() };
    const sink = new VerificationEventSink({ writer: slow, maxBuffered: 2 });
    sink.record(event());
    sink.record(event());
    expect(sink.pending).toBe(2);
    sink.record(event());
    sink.record(event());
    expect(sink.takeDropped()).toBe(1);
    release();
  });
});

describe("early hand-over", () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  test("every handOverAt events a batch is handed over to be held, on the next turn of the event loop, not inside record; a flush commits", async () => {
    const writes: { events: number; hold: boolean }[] = [];
    const writer = new SqliteEventWriter(db.storage);
    const sink = new VerificationEventSink({
      writer: { write: (e, opts) => { writes.push({ events: packedCount(e), hold: opts?.hold ?? false }); return writer.write(e); }, close: async () => {} }, handOverAt: 3,
    });
    sink.record(event());
    sink.record(event());
    await nextTurn();
    expect(writes).toEqual([]);
    sink.record(event());
    expect(writes).toEqual([]);
    for (let i = 0; i < 4; i++) sink.record(event());
    await nextTurn();
    // The turn after the third event found all seven buffered: one hand-over took them.
    expect(writes).toEqual([{ events: 7, hold: true }]);
    sink.record(event());
    expect(await sink.flush()).toBe(1);
    expect(writes).toEqual([{ events: 7, hold: true }, { events: 1, hold: false }]);
    expect({ stored: count(db.storage, "verification_events"), pending: sink.pending }).toEqual({ stored: 8, pending: 0 });
  });

  test("a flush with nothing buffered after a held hand-over still hands over a batch not held, so the writer commits what it holds", async () => {
    const held: (() => void)[] = [];
    const writes: { events: number; hold: boolean }[] = [];
    const sink = new VerificationEventSink({
      writer: {
        // A writer that holds as it may: a held batch resolves only with the next batch not held.
        write: (e, opts) => {
          writes.push({ events: packedCount(e), hold: opts?.hold ?? false });
          if (opts?.hold) return new Promise<void>((resolve) => held.push(resolve));
          for (const resolve of held.splice(0)) resolve();
          return Promise.resolve();
        },
        close: async () => {},
      },
      handOverAt: 2,
    });
    sink.record(event());
    sink.record(event());
    await nextTurn();
    expect(sink.pending).toBe(2);
    expect(await sink.flush()).toBe(0);
    expect(writes).toEqual([{ events: 2, hold: true }, { events: 0, hold: false }]);
    expect(sink.pending).toBe(0);
    // Nothing held and nothing buffered: a flush hands nothing over.
    await sink.flush();
    expect(writes).toHaveLength(2);
  });
});

describe("after close", () => {
  test("nothing is handed to a closed writer, not even a full buffer", async () => {
    const calls: string[] = [];
    const writer = new SqliteEventWriter(db.storage);
    const sink = new VerificationEventSink({
      writer: { write: (e) => { calls.push("write"); return writer.write(e); }, close: async () => { calls.push("close"); } }, maxBuffered: 2,
    });
    sink.record(event());
    await sink.close();
    sink.record(event());
    sink.record(event());
    expect(calls).toEqual(["write", "close"]);
    expect(sink.pending).toBe(0);
  });
});

describe("close", () => {
  test("flushes what is left, then closes the writer", async () => {
    const closed: string[] = [];
    const writer = new SqliteEventWriter(db.storage);
    const sink = new VerificationEventSink({ writer: { write: (e) => writer.write(e), close: async () => { closed.push("closed"); } } });
    sink.record(event());
    await sink.close();
    expect(count(db.storage, "verification_events")).toBe(1);
    expect(closed).toEqual(["closed"]);
  });
});
