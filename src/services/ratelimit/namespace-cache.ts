/**
 * Namespaces and their overrides held in memory per workspace, so a `limit` on a known namespace
 * reads no SQLite. Entries are added when a namespace is first looked up or created; a namespace's
 * override index is built on first use and then kept up to date by every change to its overrides.
 *
 * In the embedded mode only this process changes namespaces and overrides (no CLI command touches
 * them), so the cache cannot go stale behind its back; in the cluster, another node's change notice
 * clears the workspace's entries (RatelimitService.workspaceChanged).
 *
 * Bounded by bytes, per workspace and in total: a caller that may create namespaces and overrides
 * can create them without end. An entry is charged what it may cost at worst (a fixed part and two
 * bytes per character of its name and scope) plus its override index's bytes. Over a cap the
 * workspace gives up its own least recently used entries, never another workspace's; an entry that
 * still does not fit is not kept (it is read from SQLite again when next named). The order is the
 * insertion order of `byId`, renewed on each hit.
 */
import type { NamespaceOverrides } from "./overrides.ts";
import type { NamespaceRecord } from "./records.ts";

export interface NamespaceEntry extends NamespaceRecord {
  /** Built lazily from the live overrides; undefined until needed. */
  overrides: NamespaceOverrides | undefined;
  /** The build under way when the records answer with promises, so that concurrent checks share it. */
  overridesLoading: Promise<NamespaceOverrides> | undefined;
  workspaceId: string;
  /** The namespace's scope in the limiter: `${workspaceId}|${namespaceId}`. */
  scope: string;
  /** Bytes charged to its workspace while cached. */
  chargedBytes: number;
}

/** Memory the cached namespaces and their overrides may use, as namespaceBytes and the indexes count it. */
export interface NamespaceCacheCaps {
  totalBytes: number;
  workspaceBytes: number;
}

/** Bytes charged for every cached namespace besides its characters: its object and two map entries. */
export const NAMESPACE_FIXED_BYTES = 512;

/** What a cached namespace may cost at worst, its overrides left out. */
export function namespaceBytes(entry: Pick<NamespaceEntry, "id" | "name" | "scope">): number {
  return NAMESPACE_FIXED_BYTES + 2 * (entry.id.length + entry.name.length + entry.scope.length);
}

/** An entry for `ns`, not cached yet. */
export function namespaceEntry(workspaceId: string, ns: NamespaceRecord): NamespaceEntry {
  return {
    id: ns.id, name: ns.name, deleted: ns.deleted, overrides: undefined, overridesLoading: undefined,
    workspaceId, scope: `${workspaceId}|${ns.id}`, chargedBytes: 0,
  };
}

interface WorkspaceEntries {
  byId: Map<string, NamespaceEntry>;
  byName: Map<string, NamespaceEntry>;
  bytes: number;
}

export class NamespaceCache {
  private readonly workspaces = new Map<string, WorkspaceEntries>();
  private totalBytes = 0;
  private entries = 0;

  constructor(private readonly caps: NamespaceCacheCaps) {}

  /** Entries held and the bytes charged for them, in all or of one workspace. */
  stats(workspaceId?: string): { entries: number; bytes: number } {
    if (workspaceId === undefined) return { entries: this.entries, bytes: this.totalBytes };
    const ws = this.workspaces.get(workspaceId);
    return { entries: ws?.byId.size ?? 0, bytes: ws?.bytes ?? 0 };
  }

  /** The cached namespace whose id, or else whose name, is `ref`; it becomes the most recently used. */
  get(workspaceId: string, ref: string): NamespaceEntry | undefined {
    const ws = this.workspaces.get(workspaceId);
    if (ws === undefined) return undefined;
    const entry = ws.byId.get(ref) ?? ws.byName.get(ref);
    if (entry !== undefined) {
      ws.byId.delete(entry.id);
      ws.byId.set(entry.id, entry);
    }
    return entry;
  }

  /** Caches a namespace read from or written to SQLite, if it fits; returns the entry to use. */
  put(workspaceId: string, ns: NamespaceRecord): NamespaceEntry {
    let ws = this.workspaces.get(workspaceId);
    if (ws === undefined) {
      ws = { byId: new Map(), byName: new Map(), bytes: 0 };
      this.workspaces.set(workspaceId, ws);
    }
    const known = ws.byId.get(ns.id);
    if (known !== undefined) return known;
    const entry = namespaceEntry(workspaceId, ns);
    ws.byId.set(ns.id, entry);
    ws.byName.set(ns.name, entry);
    this.entries++;
    this.recharge(ws, entry);
    return entry;
  }

  /** Charges a cached entry again after its override index was built or changed. */
  resized(entry: NamespaceEntry): void {
    const ws = this.workspaces.get(entry.workspaceId);
    if (ws !== undefined && ws.byId.get(entry.id) === entry) this.recharge(ws, entry);
  }

  /** Forgets one workspace's entries, or every entry. */
  clear(workspaceId?: string): void {
    const ids = workspaceId === undefined ? [...this.workspaces.keys()] : [workspaceId];
    for (const id of ids) {
      const ws = this.workspaces.get(id);
      if (ws === undefined) continue;
      this.totalBytes -= ws.bytes;
      this.entries -= ws.byId.size;
      this.workspaces.delete(id);
    }
  }

  /** Sets an entry's charge, then makes room: the workspace's least recently used go first, the entry itself last. */
  private recharge(ws: WorkspaceEntries, entry: NamespaceEntry): void {
    const bytes = namespaceBytes(entry) + (entry.overrides?.bytes ?? 0);
    ws.bytes += bytes - entry.chargedBytes;
    this.totalBytes += bytes - entry.chargedBytes;
    entry.chargedBytes = bytes;
    while (ws.bytes > this.caps.workspaceBytes || this.totalBytes > this.caps.totalBytes) {
      let oldest = ws.byId.values().next().value!;
      if (oldest === entry && ws.byId.size > 1) {
        ws.byId.delete(entry.id);
        ws.byId.set(entry.id, entry);
        oldest = ws.byId.values().next().value!;
      }
      this.drop(ws, oldest);
      if (oldest === entry) break;
    }
    if (ws.byId.size === 0) this.workspaces.delete(entry.workspaceId);
  }

  private drop(ws: WorkspaceEntries, entry: NamespaceEntry): void {
    ws.byId.delete(entry.id);
    ws.byName.delete(entry.name);
    ws.bytes -= entry.chargedBytes;
    this.totalBytes -= entry.chargedBytes;
    entry.chargedBytes = 0;
    this.entries--;
  }
}
