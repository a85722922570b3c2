/**
 * Builds a namespace's override index when a check first needs it, reading a bounded number of
 * rows, since the read is on that check's path: all the namespace's overrides when they fit its
 * share of the namespace cache, else only its wildcards, its exact overrides then looked up in
 * SQLite per check (one indexed point lookup, through a statement compiled once).
 */
import type { Storage } from "../../storage/db.ts";
import { OVERRIDE_FIXED_BYTES, OverrideIndex, type Spill } from "./overrides.ts";
import { countLiveOverrides, loadOverrides, loadWildcardOverrides, prepareFindLiveOverride } from "./records.ts";

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
  private findExact: ReturnType<typeof prepareFindLiveOverride> | undefined;

  constructor(private readonly storage: Storage, workspaceBytes: number) {
    this.shareBytes = Math.floor(workspaceBytes * OVERRIDE_SHARE_OF_WORKSPACE);
    this.mostRows = Math.floor(this.shareBytes / OVERRIDE_FIXED_BYTES);
  }

  load(namespaceId: string): OverrideIndex {
    const { db } = this.storage;
    const find = this.findExact ??= prepareFindLiveOverride(db);
    const spill: Spill = { maxBytes: this.shareBytes, findExact: (identifier) => find(namespaceId, identifier) };
    if (countLiveOverrides(db, namespaceId, this.mostRows + 1) <= this.mostRows) return new OverrideIndex(loadOverrides(db, namespaceId), spill);
    return OverrideIndex.spilled(loadWildcardOverrides(db, namespaceId), spill);
  }
}
