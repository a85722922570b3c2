/**
 * Units of work over the namespace and override records (storage/records/ratelimits.ts), written
 * once for both backends. Each takes only the stores it uses, so that a check's synchronous path
 * can run one over a single SQLite store without building all of them.
 */
import { newId } from "../../lib/ids.ts";
import { step, type Work } from "../../storage/work.ts";
import type { NamespaceRecord, OverrideRecord, Records } from "../../storage/records/index.ts";
import { writeAudit } from "../audit/index.ts";
import type { Actor } from "../auth/index.ts";

export type { NamespaceRecord } from "../../storage/records/index.ts";

/** The workspace's namespace whose id, or else whose name, is `ref` (deleted ones included). */
export function* findNamespaceIn(r: Pick<Records, "namespaces">, workspaceId: string, ref: string): Work<NamespaceRecord | undefined> {
  const byId = yield* step(r.namespaces.findById(workspaceId, ref));
  return byId ?? (yield* step(r.namespaces.findByName(workspaceId, ref)));
}

/** Creates a namespace named `name`; answers the existing one if the name is taken. */
export function* insertNamespaceIn(
  r: Pick<Records, "namespaces">, workspaceId: string, name: string, nowMs: number,
): Work<{ namespace: NamespaceRecord; created: boolean }> {
  const id = newId("rlns");
  if (yield* step(r.namespaces.insert({ id, workspaceId, name, createdAt: nowMs }))) return { namespace: { id, name, deleted: false }, created: true };
  const existing = yield* step(r.namespaces.findByName(workspaceId, name));
  if (!existing) throw new Error(`namespace '${name}' neither inserted nor found`);
  return { namespace: existing, created: false };
}

/** Creates the namespaces named `names` (by name, in order), one audit entry for each one made. */
export function* createNamespacesIn(
  r: Records, workspaceId: string, actor: Actor, names: readonly string[], nowMs: number,
): Work<Array<readonly [string, NamespaceRecord]>> {
  const namespaces: Array<readonly [string, NamespaceRecord]> = [];
  for (const name of names) {
    const result = yield* insertNamespaceIn(r, workspaceId, name, nowMs);
    if (result.created) {
      yield writeAudit(r, {
        workspaceId, event: "ratelimit.create_namespace", actor, timeMs: nowMs,
        resources: [{ type: "ratelimitNamespace", id: result.namespace.id, name }], description: `Created namespace ${name}`,
      });
    }
    namespaces.push([name, result.namespace]);
  }
  return namespaces;
}

/** Updates `existing` (it keeps its id), or inserts a new live override when there is none. */
export function* upsertOverrideIn(
  r: Pick<Records, "overrides">, workspaceId: string, namespaceId: string, existing: OverrideRecord | undefined,
  input: { identifier: string; limit: number; duration: number }, nowMs: number,
): Work<OverrideRecord> {
  const values = { identifier: input.identifier, limit: input.limit, duration: input.duration };
  if (existing) {
    yield r.overrides.update(existing.id, { limit: input.limit, durationMs: input.duration }, nowMs);
    return { ...values, id: existing.id, createdAt: existing.createdAt };
  }
  const id = newId("rlor");
  yield r.overrides.insert({
    id, workspaceId, namespaceId, identifier: input.identifier, limit: input.limit, durationMs: input.duration, createdAt: nowMs,
  });
  return { ...values, id, createdAt: nowMs };
}

/**
 * What a namespace's override index is built from, reading a bounded number of rows: every live
 * override when there are at most `mostRows`, else the wildcards alone (`spilled`).
 */
export function* loadOverrideRowsIn(
  r: Pick<Records, "overrides">, namespaceId: string, mostRows: number,
): Work<{ spilled: boolean; rows: OverrideRecord[] }> {
  if ((yield* step(r.overrides.countLive(namespaceId, mostRows + 1))) <= mostRows) {
    return { spilled: false, rows: yield* step(r.overrides.loadLive(namespaceId)) };
  }
  return { spilled: true, rows: yield* step(r.overrides.loadLiveWildcards(namespaceId)) };
}
