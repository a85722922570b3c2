/** Databases as an older version left them, for the upgrade tests: migrated up to, not including, a given migration. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../src/storage/db.ts";
import { applyMigrations } from "../../src/storage/migrate.ts";
import { MIGRATIONS } from "../../src/storage/migrations.ts";
import { SPLIT_MIGRATION } from "../../src/storage/data-dir.ts";
import type { Database, Statement } from "bun:sqlite";
import type { EventBatchRow, RawRowWriter } from "../../src/services/analytics/raw-events.ts";
import { EventTables } from "../../src/services/analytics/tables.ts";
import type { StoredEvent } from "../../src/services/analytics/types.ts";

/** The position of migration `tag` in the journal: how many migrations come before it. */
export function migrationIndex(tag: string): number {
  const index = MIGRATIONS.findIndex((m) => m.tag === tag);
  if (index < 0) throw new Error(`no migration ${tag}`);
  return index;
}

/**
 * For the upgrade tests of the analytics tables in tollgate.db: their history there ends before
 * 0009, which drops them once their rows are in analytics.db (analytics-split.test.ts).
 */
export const UNTIL_SPLIT = { before: SPLIT_MIGRATION };

/** Opens databases in temp dirs, each migrated up to `tag`; `removeAll` (for afterEach) deletes them. */
export function databasesBefore(tag: string): { open(): Storage; removeAll(): void } {
  const dirs: string[] = [];
  return {
    open() {
      const dir = mkdtempSync(join(tmpdir(), `tollgate-before-${tag}-`));
      dirs.push(dir);
      const s = openStorage(join(dir, "tollgate.db"));
      applyMigrations(s.sqlite, MIGRATIONS.slice(0, migrationIndex(tag)));
      return s;
    },
    removeAll() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/**
 * Raw batch rows of the first layout, as the event writer wrote them before analytics.db's
 * migration 0001 (and into tollgate.db before the split): one row per workspace and minute, each
 * event every field in this order, its key space among them.
 */
export class LayoutOneRows implements RawRowWriter {
  private readonly statement: Statement<unknown, [string, number, number, number, string]>;

  constructor(sqlite: Database) {
    this.statement = sqlite.prepare("INSERT INTO verification_event_batches (workspace_id, min_time, max_time, event_count, events) VALUES (?, ?, ?, ?, ?)");
  }

  rows(stored: readonly StoredEvent[]): EventBatchRow[] {
    const groups = new Map<string, StoredEvent[]>();
    for (const e of stored) {
      const key = `${e.workspaceId} ${Math.floor(e.timeMs / 60_000)}`;
      const group = groups.get(key);
      if (group) group.push(e);
      else groups.set(key, [e]);
    }
    return [...groups.values()].map((events) => {
      const times = events.map((e) => e.timeMs);
      const fields = events.map((e) => [e.requestId, e.timeMs, e.keySpaceId, e.keyId, e.identityId, e.externalId, e.outcome, e.tags, e.spentCredits, e.latencyMs]);
      return {
        workspaceId: events[0]!.workspaceId, keySpaceId: "", minTime: Math.min(...times), maxTime: Math.max(...times), eventCount: events.length,
        events: JSON.stringify(fields),
      };
    });
  }

  insert(b: EventBatchRow): void {
    this.statement.run(b.workspaceId, b.minTime, b.maxTime, b.eventCount, b.events);
  }
}

/** The event writer's tables as they were before analytics.db's migration 0001: its raw rows of the first layout. */
export function eventTablesBefore(s: Storage): EventTables {
  return new EventTables(s, new LayoutOneRows(s.sqlite));
}
