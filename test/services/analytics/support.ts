/** A data dir's migrated databases in a temp dir, and event builders, for the analytics service tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Storage } from "../../../src/storage/db.ts";
import { openDataStores } from "../../../src/storage/data-dir.ts";
import { storedTags, type StoredEvent, type VerificationEvent } from "../../../src/services/analytics/types.ts";
import { EventPacker, type PackedEvents } from "../../../src/services/analytics/packed-events.ts";

export interface TempDb {
  /** analytics.db, where the analytics services read and write. */
  storage: Storage;
  /** tollgate.db beside it. */
  main: Storage;
  close(): void;
}

export function tempDb(): TempDb {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-analytics-"));
  const stores = openDataStores(dir);
  return {
    storage: stores.analytics,
    main: stores.storage,
    close() {
      stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An event's fields as the tests vary them. */
export type EventFields = Partial<VerificationEvent>;

/** An event: the defaults below, with `overrides`. */
export function event(overrides: EventFields = {}): VerificationEvent {
  return {
    timeMs: Date.UTC(2026, 2, 15, 12, 30, 15),
    workspaceId: "ws_a",
    keySpaceId: "ks_a",
    keyId: "key_a",
    identityId: "",
    externalId: "",
    outcome: "VALID",
    tags: [] as readonly string[],
    spentCredits: 0,
    latencyMs: 1,
    ...overrides,
  };
}

/** A stored event as verification records it (tags as a list again). */
export function fromStored(e: StoredEvent): VerificationEvent {
  return { ...e, tags: JSON.parse(e.tags) as string[] };
}

/** The columns of the view `verification_events` that hold an event's fields. */
export const VIEW_COLUMNS = "request_id, time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, spent_credits, latency_ms";

/** A stored event as the view `verification_events` shows it (VIEW_COLUMNS). */
export function viewRow(e: StoredEvent): Record<string, unknown> {
  return {
    request_id: e.requestId, time: e.timeMs, workspace_id: e.workspaceId, key_space_id: e.keySpaceId, key_id: e.keyId, identity_id: e.identityId,
    external_id: e.externalId, outcome: e.outcome, tags: e.tags, spent_credits: e.spentCredits, latency_ms: e.latencyMs,
  };
}

/** Row count of a table. */
export function count(storage: Storage, table: string): number {
  return storage.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
}

/** A rollup's table as the analytics queries read it: the minute table; for coarser ones, the view adding the minute rows not folded yet. */
export function rollupSource(granularity: "minute" | "hour" | "day" | "month"): string {
  return granularity === "minute" ? "verification_rollups_minute" : `verification_rollups_${granularity}_all`;
}

/** The rows of a rollup as the queries see them, summed per primary key (a folded row and unfolded minute rows may share one). */
export function rollupRows(storage: Storage, granularity: "minute" | "hour" | "day" | "month") {
  return storage.sqlite.query<{
    time: number; workspace_id: string; key_space_id: string; key_id: string; identity_id: string; external_id: string; outcome: string; tags: string;
    count: number; spent_credits: number; latency_sum_ms: number; latency_max_ms: number;
  }, []>(
    `SELECT time, workspace_id, key_space_id, key_id, identity_id, min(external_id) AS external_id, outcome, tags,
       sum("count") AS count, sum(spent_credits) AS spent_credits, sum(latency_sum_ms) AS latency_sum_ms, max(latency_max_ms) AS latency_max_ms
     FROM ${rollupSource(granularity)} GROUP BY workspace_id, time, key_space_id, key_id, identity_id, outcome, tags ORDER BY workspace_id, time, key_space_id, key_id, identity_id, outcome, tags`,
  ).all();
}

/** `e` as the writer stores it: what packing and unpacking give back. */
export function toStored(e: VerificationEvent): StoredEvent {
  return {
    requestId: e.requestId ?? "", timeMs: e.timeMs, workspaceId: e.workspaceId, keySpaceId: e.keySpaceId, keyId: e.keyId,
    identityId: e.identityId, externalId: e.externalId, outcome: e.outcome, tags: storedTags(e.tags), spentCredits: e.spentCredits, latencyMs: e.latencyMs,
  };
}

/** `events` packed as the sink packs them, for a writer. */
export function packEvents(events: Iterable<VerificationEvent>): PackedEvents {
  const packer = new EventPacker();
  for (const e of events) packer.add(e);
  return packer.take();
}
