/** Upgrading a database that holds raw events one row each to the batch rows of 0007, and the view over them. */
import { afterEach, expect, test } from "bun:test";
import type { Storage } from "../../src/storage/db.ts";
import { applyMigrations } from "../../src/storage/migrate.ts";
import { MIGRATIONS } from "../../src/storage/migrations.ts";
import { SPLIT_MIGRATION } from "../../src/storage/data-dir.ts";
import { databasesBefore, eventTablesBefore, migrationIndex, UNTIL_SPLIT } from "./support.ts";

const BEFORE_0007 = migrationIndex("0007_raw_events_in_batches");
const COLUMNS = "request_id, time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, spent_credits, latency_ms";
const START = Date.UTC(2026, 0, 1);

const databases = databasesBefore("0007_raw_events_in_batches");
afterEach(() => databases.removeAll());

/** A database before 0007 with 2,500 raw events, the two workspaces' interleaved. */
function oldLayoutDb(): Storage {
  const s = databases.open();
  const insert = s.sqlite.prepare(`INSERT INTO verification_events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  s.sqlite.transaction(() => {
    for (let i = 0; i < 2500; i++) {
      insert.run(`req_${i}`, START + ((i * 7919) % 2500) * 1000, i % 2 ? "ws_odd" : "ws_even", `ks_${i % 3}`, `key_${i % 50}`,
        i % 5 ? "" : `id_${i % 4}`, i % 5 ? "" : `ext_${i % 4}`, i % 11 ? "VALID" : "RATE_LIMITED", i % 3 ? "[]" : '["path=/v1"]', i % 4, (i % 9) / 4);
    }
  })();
  return s;
}

const eventsOf = (s: Storage, order: string) => s.sqlite.query(`SELECT ${COLUMNS} FROM verification_events ORDER BY ${order}`).all();

test("0007 moves every raw event into batch rows of 1,000 per workspace, in the order written, and the view reads them back alike", () => {
  const s = oldLayoutDb();
  try {
    const before = eventsOf(s, "workspace_id, id");
    expect(applyMigrations(s.sqlite, MIGRATIONS, UNTIL_SPLIT)).toEqual(MIGRATIONS.slice(BEFORE_0007, migrationIndex(SPLIT_MIGRATION)).map((m) => m.tag));
    expect(eventsOf(s, "batch_id, position")).toEqual(before);
    const batches = s.sqlite.query<{ workspace_id: string; event_count: number; ok: number }, []>(
      `SELECT workspace_id, event_count,
         min_time = (SELECT min(value ->> 1) FROM json_each(events)) AND max_time = (SELECT max(value ->> 1) FROM json_each(events)) AS ok
       FROM verification_event_batches ORDER BY id`).all();
    expect(batches).toEqual([
      { workspace_id: "ws_even", event_count: 1000, ok: 1 }, { workspace_id: "ws_even", event_count: 250, ok: 1 },
      { workspace_id: "ws_odd", event_count: 1000, ok: 1 }, { workspace_id: "ws_odd", event_count: 250, ok: 1 },
    ]);
    // The view's columns compare as the table's did: `time` as a number, also against a numeric string.
    expect(s.sqlite.query("SELECT count(*) AS n FROM verification_events WHERE time < ?").get(String(START + 1000 * 1000))).toEqual({ n: 1000 });
    expect(s.sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check).toBe("ok");

    // The writer adds rows after the moved ones.
    eventTablesBefore(s).write([{
      timeMs: START, requestId: "req_new", workspaceId: "ws_odd", keySpaceId: "ks_0", keyId: "key_0", identityId: "", externalId: "", outcome: "VALID", tags: "[]", spentCredits: 0, latencyMs: 1,
    }]);
    expect(eventsOf(s, "batch_id DESC, position DESC LIMIT 1")).toEqual([expect.objectContaining({ request_id: "req_new", workspace_id: "ws_odd" })]);
  } finally {
    s.close();
  }
});

test("0007 failing part-way leaves the raw events table and its rows as they were, and is not recorded", () => {
  const s = oldLayoutDb();
  try {
    const before = eventsOf(s, "id");
    // The index's name is taken: the migration fails after creating the batch table.
    s.sqlite.run("CREATE INDEX verification_event_batches_workspace_time_idx ON audit_logs (time)");
    expect(() => applyMigrations(s.sqlite)).toThrow(/already exists/);
    expect(eventsOf(s, "id")).toEqual(before);
    expect(s.sqlite.query("SELECT type FROM sqlite_master WHERE name IN ('verification_events', 'verification_event_batches')").all()).toEqual([{ type: "table" }]);
    const recorded = s.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM "__drizzle_migrations"`).get()!.n;
    expect(recorded).toBe(BEFORE_0007);
  } finally {
    s.close();
  }
});
