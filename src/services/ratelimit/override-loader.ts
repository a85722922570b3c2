/**
 * Builds a namespace's override index when a check first needs it, reading a bounded number of
 * rows, since the read is on that check's path: all the namespace's overrides when they fit its
 * share of the namespace cache, else only its wildcards, its exact overrides then looked up per
 * check (one indexed point lookup). Embedded, the reads are synchronous (check-reads.ts), so that a
 * check never awaits; in the cluster the build and a spilled index's lookups answer promises.
 */
import { then, type Maybe } from "../../storage/work.ts";
import type { CheckReads } from "./check-reads.ts";
import { OVERRIDE_FIXED_BYTES, OverrideIndex, type Found, type NamespaceOverrides, type Spill } from "./overrides.ts";

/**
 * The share of a workspace's namespace cache that one namespace's overrides may hold. Over
 * OVERRIDE_FIXED_BYTES it is also the most rows one build reads.
 */
export const OVERRIDE_SHARE_OF_WORKSPACE = 1 / 32;

export class OverrideLoader {
  /** Bytes of overrides one namespace's index holds before it spills. */
  readonly shareBytes: number;
  private readonly mostRows: number;

  constructor(private readonly reads: CheckReads, workspaceBytes: number) {
    this.shareBytes = Math.floor(workspaceBytes * OVERRIDE_SHARE_OF_WORKSPACE);
    this.mostRows = Math.floor(this.shareBytes / OVERRIDE_FIXED_BYTES);
  }

  load(namespaceId: string): Maybe<NamespaceOverrides> {
    const reads = this.reads;
    const spill: Spill<Maybe<Found>> = { maxBytes: this.shareBytes, findExact: (identifier) => reads.findOverride(namespaceId, identifier) };
    return then(this.reads.loadOverrides(namespaceId, this.mostRows), (loaded) =>
      loaded.spilled ? OverrideIndex.spilled(loaded.rows, spill) : new OverrideIndex(loaded.rows, spill));
  }
}
