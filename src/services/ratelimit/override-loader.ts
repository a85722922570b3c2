/**
 * Builds a namespace's override index when a check first needs it, reading a bounded number of
 * rows, since the read is on that check's path: all the namespace's overrides when they fit its
 * share of the namespace cache, else only its wildcards, its exact overrides then looked up in
 * SQLite per check (one indexed point lookup, through a statement compiled once). It reads the
 * SQLite file directly and synchronously, so that a check in the embedded mode never awaits.
 */
import type { Storage } from "../../storage/db.ts";
import { SqliteOverrideStore } from "../../storage/records/index.ts";
import { runNow } from "../../storage/work.ts";
import { OVERRIDE_FIXED_BYTES, OverrideIndex, type OverrideRecord, type Spill } from "./overrides.ts";
import { loadOverrideRowsIn } from "./records.ts";

/**
 * The share of a workspace's namespace cache that one namespace's overrides may hold. Over
 * OVERRIDE_FIXED_BYTES it is also the most rows one build reads.
 */
export const OVERRIDE_SHARE_OF_WORKSPACE = 1 / 32;

export class OverrideLoader {
  /** Bytes of overrides one namespace's index holds before it spills. */
  readonly shareBytes: number;
  private readonly mostRows: number;
  /** Compiled with the first index, so that a service that never checks compiles nothing. */
  private findExact: ((namespaceId: string, identifier: string) => OverrideRecord | undefined) | undefined;

  constructor(private readonly storage: Storage, workspaceBytes: number) {
    this.shareBytes = Math.floor(workspaceBytes * OVERRIDE_SHARE_OF_WORKSPACE);
    this.mostRows = Math.floor(this.shareBytes / OVERRIDE_FIXED_BYTES);
  }

  load(namespaceId: string): OverrideIndex {
    const overrides = new SqliteOverrideStore(this.storage.db);
    const find = this.findExact ??= overrides.prepareFindLive();
    const spill: Spill = { maxBytes: this.shareBytes, findExact: (identifier) => find(namespaceId, identifier) };
    const loaded = runNow(loadOverrideRowsIn({ overrides }, namespaceId, this.mostRows));
    return loaded.spilled ? OverrideIndex.spilled(loaded.rows, spill) : new OverrideIndex(loaded.rows, spill);
  }
}
