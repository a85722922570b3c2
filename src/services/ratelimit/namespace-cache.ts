/**
 * Namespaces and their overrides held in memory per workspace, so a `limit` on a known namespace
 * reads no SQLite. Entries are added when a namespace is first looked up or created; a namespace's
 * override index is built on first use and then kept up to date by every change to its overrides.
 *
 * Only this process changes namespaces and overrides (no CLI command touches them), so the cache
 * cannot go stale behind its back; `clear` exists for anyone who edits those rows directly.
 *
 * Bounded per workspace: a caller that may create namespaces can create them without end, so
 * beyond `maxPerWorkspace` the workspace's least recently used entry is dropped (it is read from
 * SQLite again when next named). The order is the insertion order of `byId`, renewed on each hit.
 */
import type { OverrideIndex } from "./overrides.ts";
import type { NamespaceRecord } from "./records.ts";

export interface NamespaceEntry extends NamespaceRecord {
  /** Built lazily from the live overrides; undefined until needed. */
  overrides: OverrideIndex | undefined;
  workspaceId: string;
  /** The namespace's scope in the limiter: `${workspaceId}|${namespaceId}`. */
  scope: string;
}

interface WorkspaceEntries {
  byId: Map<string, NamespaceEntry>;
  byName: Map<string, NamespaceEntry>;
}

export class NamespaceCache {
  private readonly workspaces = new Map<string, WorkspaceEntries>();

  constructor(private readonly maxPerWorkspace: number) {}

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

  /** Caches a namespace read from or written to SQLite; returns the cached entry. */
  put(workspaceId: string, ns: NamespaceRecord): NamespaceEntry {
    let ws = this.workspaces.get(workspaceId);
    if (ws === undefined) {
      ws = { byId: new Map(), byName: new Map() };
      this.workspaces.set(workspaceId, ws);
    }
    const known = ws.byId.get(ns.id);
    if (known !== undefined) return known;
    const entry: NamespaceEntry = { id: ns.id, name: ns.name, deleted: ns.deleted, overrides: undefined, workspaceId, scope: `${workspaceId}|${ns.id}` };
    ws.byId.set(ns.id, entry);
    ws.byName.set(ns.name, entry);
    if (ws.byId.size > this.maxPerWorkspace) {
      const oldest = ws.byId.values().next().value!;
      ws.byId.delete(oldest.id);
      ws.byName.delete(oldest.name);
    }
    return entry;
  }

  /** Forgets one workspace's entries, or every entry. */
  clear(workspaceId?: string): void {
    if (workspaceId === undefined) this.workspaces.clear();
    else this.workspaces.delete(workspaceId);
  }
}
