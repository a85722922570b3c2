/**
 * analytics.db's migration 0001: the raw batch rows written before it (layout 1) stay as they are
 * and read as before through the view, beside the rows of layout 2 written after it.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../src/storage/db.ts";
import { applyMigrations } from "../../src/storage/migrate.ts";
import { ANALYTICS_MIGRATIONS } from "../../src/storage/migrations.ts";
import { EventTables } from "../../src/services/analytics/tables.ts";
import type { StoredEvent } from "../../src/services/analytics/types.ts";
import { toStored } from "../services/analytics/support.ts";
import { event, viewRow, VIEW_COLUMNS } from "../services/analytics/support.ts";
import { eventTablesBefore } from "./support.ts";

const START = Date.UTC(2026, 5, 1, 10, 0, 0);
const MIGRATION = "0001_raw_events_slim";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** An analytics.db migrated up to, not including, 0001. */
function analyticsBefore(): Storage {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-before-raw-slim-"));
  dirs.push(dir);
  const s = openStorage(join(dir, "analytics.db"));
  applyMigrations(s.sqlite, ANALYTICS_MIGRATIONS.slice(0, ANALYTICS_MIGRATIONS.findIndex((m) => m.tag === MIGRATION)));
  return s;
}

/** 1,200 events of two workspaces and three key spaces over three minutes, some with identity, tags and request id. */
function events(from: number): StoredEvent[] {
  return Array.from({ length: 1200 }, (_, i) => toStored(event({
    timeMs: from + i * 150, workspaceId: i % 2 ? "ws_a" : "ws_b", keySpaceId: `ks_${i % 3}`, keyId: `key_${i % 40}`,
    identityId: i % 5 ? "" : `id_${i % 4}`, externalId: i % 5 ? "" : `ext_${i % 4}`, outcome: i % 11 ? "VALID" : "RATE_LIMITED",
    tags: i % 3 ? [] : ["path=/v1"], spentCredits: i % 4, latencyMs: (i % 9) / 4, ...(i % 7 ? {} : { requestId: `req_${i}` }),
  })));
}

const viewOf = (s: Storage, where = "1") => s.sqlite.query(`SELECT ${VIEW_COLUMNS} FROM verification_events WHERE ${where} ORDER BY time, key_id, request_id`).all();
const byText = (a: unknown, b: unknown) => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0);
const expected = (list: StoredEvent[]) => list.map(viewRow).sort((a, b) =>
  (a.time as number) - (b.time as number) || byText(a.key_id, b.key_id) || (byText(a.request_id, b.request_id) < 0 ? -1 : 1));

test("0001 keeps the rows written before it, which read as before beside those written after it, which take a third fewer bytes", () => {
  const s = analyticsBefore();
  try {
    const old = events(START);
    const tables = eventTablesBefore(s);
    for (let i = 0; i < old.length; i += 400) tables.write(old.slice(i, i + 400));
    const before = viewOf(s);
    expect(before).toEqual(expected(old));
    const oldBytes = s.sqlite.query<{ n: number }, []>("SELECT sum(length(events)) AS n FROM verification_event_batches").get()!.n;

    expect(applyMigrations(s.sqlite, ANALYTICS_MIGRATIONS.slice(0, ANALYTICS_MIGRATIONS.findIndex((m) => m.tag === MIGRATION) + 1))).toEqual([MIGRATION]);
    expect(s.sqlite.query("SELECT DISTINCT layout, key_space_id FROM verification_event_batches").all()).toEqual([{ layout: 1, key_space_id: "" }]);
    expect(viewOf(s)).toEqual(before);
    expect(s.sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check).toBe("ok");

    const newer = events(START + 3_600_000);
    const writer = new EventTables(s);
    for (let i = 0; i < newer.length; i += 400) writer.write(newer.slice(i, i + 400));
    expect(viewOf(s)).toEqual(expected([...old, ...newer]));
    // Each arm of the view reads its own rows: a time range, a workspace and a key space find them in either layout.
    for (const [where, pick] of [
      [`time >= ${START + 60_000} AND time < ${START + 3_700_000}`, (e: StoredEvent) => e.timeMs >= START + 60_000 && e.timeMs < START + 3_700_000],
      ["workspace_id = 'ws_a' AND key_space_id = 'ks_1'", (e: StoredEvent) => e.workspaceId === "ws_a" && e.keySpaceId === "ks_1"],
    ] as const) {
      expect(viewOf(s, where)).toEqual(expected([...old, ...newer].filter(pick)));
    }
    const newBytes = s.sqlite.query<{ n: number }, []>("SELECT sum(length(events)) AS n FROM verification_event_batches WHERE layout = 2").get()!.n;
    expect(newBytes).toBeLessThan(oldBytes * 0.7);
  } finally {
    s.close();
  }
});
