/**
 * What a check reads from the records on a cache miss: a namespace, the rows of its override index,
 * an exact override of a spilled index. The embedded reads go to the SQLite file directly and answer
 * at once (the spill lookup through a statement compiled once), so that a check never awaits; the
 * cluster's run units on the records and answer promises. Which one a service uses follows from its
 * deps (service.ts): the SQLite file when it is given one, else the records.
 */
import type { Storage } from "../../storage/db.ts";
import { SqliteNamespaceStore, SqliteOverrideStore, type RecordBackend } from "../../storage/records/index.ts";
import { runNow, step, type Maybe } from "../../storage/work.ts";
import type { OverrideRecord } from "./overrides.ts";
import { findNamespaceIn, loadOverrideRowsIn, type NamespaceRecord } from "./records.ts";

export interface CheckReads {
  /** The workspace's namespace whose id, or else whose name, is `ref` (deleted ones included). */
  findNamespace(workspaceId: string, ref: string): Maybe<NamespaceRecord | undefined>;
  /** What an override index is built from, at most `mostRows` rows (records.ts loadOverrideRowsIn). */
  loadOverrides(namespaceId: string, mostRows: number): Maybe<{ spilled: boolean; rows: OverrideRecord[] }>;
  /** The live override stored with exactly this identifier. */
  findOverride(namespaceId: string, identifier: string): Maybe<OverrideRecord | undefined>;
}

/** Reads the SQLite file, synchronously; its stores are made per miss, so `storage.db` is asked for each time. */
export class SqliteCheckReads implements CheckReads {
  /** Compiled with the first override index, so that a service that never checks compiles nothing. */
  private findExact: ((namespaceId: string, identifier: string) => OverrideRecord | undefined) | undefined;

  constructor(private readonly storage: Storage) {}

  findNamespace(workspaceId: string, ref: string): NamespaceRecord | undefined {
    return runNow(findNamespaceIn({ namespaces: new SqliteNamespaceStore(this.storage.db) }, workspaceId, ref));
  }

  loadOverrides(namespaceId: string, mostRows: number): { spilled: boolean; rows: OverrideRecord[] } {
    const overrides = new SqliteOverrideStore(this.storage.db);
    this.findExact ??= overrides.prepareFindLive();
    return runNow(loadOverrideRowsIn({ overrides }, namespaceId, mostRows));
  }

  findOverride(namespaceId: string, identifier: string): OverrideRecord | undefined {
    return (this.findExact ??= new SqliteOverrideStore(this.storage.db).prepareFindLive())(namespaceId, identifier);
  }
}

/** Reads through the records' units: the cluster's PostgreSQL, answering promises. */
export class RecordCheckReads implements CheckReads {
  constructor(private readonly records: RecordBackend) {}

  findNamespace(workspaceId: string, ref: string): Maybe<NamespaceRecord | undefined> {
    return this.records.read((r) => findNamespaceIn(r, workspaceId, ref));
  }

  loadOverrides(namespaceId: string, mostRows: number): Maybe<{ spilled: boolean; rows: OverrideRecord[] }> {
    return this.records.read((r) => loadOverrideRowsIn(r, namespaceId, mostRows));
  }

  findOverride(namespaceId: string, identifier: string): Maybe<OverrideRecord | undefined> {
    return this.records.read(function* (r) {
      return yield* step(r.overrides.findLive(namespaceId, identifier));
    });
  }
}
