/**
 * The cluster's event writer (src/services/analytics/pg-writer.ts) against a real PostgreSQL: the
 * raw events, every rollup and every totals table hold exactly what the events committed give,
 * with one writer and with three (three nodes, each its own client) writing batches on the same
 * keys and minutes at once; a held batch waits for the next one; a failed transaction leaves
 * nothing written and names every event of the batch, which the sink keeps and writes once later.
 * One server for the file; a fresh database per test.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { EventWriteError, VerificationEventSink } from "../../src/services/analytics/index.ts";
import { PgEventWriter } from "../../src/services/analytics/pg-writer.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { actualEvents, asRecorded, actualTables, byRequestId, expectedTables, makeEvents, pack, stored } from "./analytics-events.ts";
import { postgresForFile } from "./pg-database.ts";

const countOf = async (sql: SQL, table: string) => Number((await sql.unsafe(`SELECT count(*)::int8 AS n FROM analytics.${table}`))[0].n);

describe.skipIf(skipWithout(missing.postgres(), "the cluster's analytics writer"))("writing verification events to PostgreSQL", () => {
  const pg = postgresForFile();

  test("one batch: every event a row, and each rollup and totals table exactly the events' aggregates", async () => {
    const sql = pg.client(await pg.freshDatabase());
    const events = makeEvents(2000, 1);
    const writer = new PgEventWriter(sql);
    await writer.write(pack(events));
    await writer.close();
    expect(await actualEvents(sql)).toEqual(byRequestId(stored(events)));
    expect(await actualTables(sql)).toEqual(expectedTables(events));
  });

  test("three nodes writing batches on the same keys and minutes at once: counts equal the events committed", async () => {
    const url = await pg.freshDatabase();
    // No second attempt: rows locked in one order never deadlock, and a deadlock must fail the test.
    const nodes = Array.from({ length: 3 }, () => new PgEventWriter(pg.client(url, 2), { attempts: 1 }));
    const batches = Array.from({ length: 3 }, (_, node) => Array.from({ length: 8 }, (_, b) => makeEvents(400, node * 100 + b, 10 * 60_000)));
    // Each node writes its batches back to back, as its flushes would, all three at the same time.
    await Promise.all(nodes.map(async (writer, node) => {
      await Promise.all(batches[node]!.map((events) => writer.write(pack(events))));
      await writer.close();
    }));
    const all = batches.flat(2);
    const sql = pg.client(url);
    expect(await countOf(sql, "verification_events")).toBe(all.length);
    expect(await actualTables(sql)).toEqual(expectedTables(all));
    for (const table of ["verification_rollups_month", "verification_totals_minute", "verification_totals_day"]) {
      const [{ n }] = await sql.unsafe(`SELECT sum("count")::int8 AS n FROM analytics.${table}`);
      expect({ table, n: Number(n) }).toEqual({ table, n: all.length });
    }
  }, 30_000);

  test("a held batch is not written until a batch not held comes, then both commit together", async () => {
    const sql = pg.client(await pg.freshDatabase());
    const writer = new PgEventWriter(sql);
    const first = makeEvents(50, 2), second = makeEvents(30, 3);
    let heldDone = false;
    const held = writer.write(pack(first), { hold: true }).then(() => { heldDone = true; });
    // Two round trips to the server: a write started at once would have committed by then.
    await sql`SELECT 1`;
    await sql`SELECT 1`;
    expect(heldDone).toBe(false);
    expect(await countOf(sql, "verification_events")).toBe(0);
    await writer.write(pack(second));
    await held;
    expect(await actualTables(sql)).toEqual(expectedTables([...first, ...second]));
    await writer.close();
  });

  test("a transaction that fails leaves nothing written and names every event of the batch", async () => {
    const sql = pg.client(await pg.freshDatabase());
    // The last statement of the transaction fails for this workspace: the events, rollups and totals before it must roll back.
    await sql.unsafe(`ALTER TABLE analytics.verification_totals_month ADD CONSTRAINT refuse_ws_a CHECK (workspace_id <> 'ws_a')`);
    const events = makeEvents(300, 4);
    const writer = new PgEventWriter(sql);
    const error = await writer.write(pack(events)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventWriteError);
    expect((error as EventWriteError).message).toContain("refuse_ws_a");
    expect((error as EventWriteError).unwritten).toEqual(asRecorded(events));
    for (const table of ["verification_events", "verification_rollups_minute", "verification_rollups_month", "verification_totals_minute", "verification_totals_month"]) {
      expect({ table, rows: await countOf(sql, table) }).toEqual({ table, rows: 0 });
    }
  });

  test("through the sink: a failed flush keeps its events, and the next flush writes each of them once", async () => {
    const sql = pg.client(await pg.freshDatabase());
    await sql.unsafe(`ALTER TABLE analytics.verification_rollups_hour ADD CONSTRAINT refuse_all CHECK (false)`);
    const sink = new VerificationEventSink({ writer: new PgEventWriter(sql) });
    const events = makeEvents(500, 5);
    for (const e of events) sink.record(e);
    await expect(sink.flush()).rejects.toThrow(EventWriteError);
    expect(sink.pending).toBe(events.length);
    await sql.unsafe(`ALTER TABLE analytics.verification_rollups_hour DROP CONSTRAINT refuse_all`);
    expect(await sink.flush()).toBe(events.length);
    await sink.close();
    expect(await actualEvents(sql)).toEqual(byRequestId(stored(events)));
    expect(await actualTables(sql)).toEqual(expectedTables(events));
  });

  test("PostgreSQL out of reach: the write rejects with every event of the batch", async () => {
    const url = new URL(await pg.freshDatabase());
    // A port nobody listens on any more: the connection is refused.
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    url.port = String(listener.port);
    listener.stop(true);
    const unreachable = new SQL(url.href, { max: 1, connectionTimeout: 2 });
    const events = makeEvents(20, 6);
    const error = await new PgEventWriter(unreachable).write(pack(events)).catch((e: unknown) => e);
    await unreachable.close();
    expect(error).toBeInstanceOf(EventWriteError);
    expect((error as EventWriteError).unwritten).toEqual(asRecorded(events));
  });
});
