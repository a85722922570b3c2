/** A migrated database in a temp dir, and event builders, for the analytics service tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../../src/storage/db.ts";
import { applyMigrations } from "../../../src/storage/migrate.ts";
import type { VerificationEvent } from "../../../src/services/analytics/index.ts";

export interface TempDb {
  storage: Storage;
  close(): void;
}

export function tempDb(): TempDb {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-analytics-"));
  const storage = openStorage(join(dir, "tollgate.db"));
  applyMigrations(storage.sqlite);
  return {
    storage,
    close() {
      storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function event(overrides: Partial<VerificationEvent> = {}): VerificationEvent {
  return {
    timeMs: Date.UTC(2026, 2, 15, 12, 30, 15),
    workspaceId: "ws_a",
    keySpaceId: "ks_a",
    keyId: "key_a",
    identityId: "",
    externalId: "",
    outcome: "VALID",
    tags: [],
    spentCredits: 0,
    latencyMs: 1,
    ...overrides,
  };
}

/** Row count of a table. */
export function count(storage: Storage, table: string): number {
  return storage.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
}
