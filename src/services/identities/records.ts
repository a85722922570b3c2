/**
 * Identity and named-limit operations shared with keys, as units of work over the record stores
 * (storage/records), run inside the caller's unit.
 */
import { DuplicateRecord, LostRace, type IdentitySummary, type RatelimitOwner, type Records } from "../../storage/records/index.ts";
import { step, type Work } from "../../storage/work.ts";
import { newId } from "../../lib/ids.ts";

export type { IdentitySummary, RatelimitConfig, RatelimitOwner } from "../../storage/records/index.ts";

/** A named limit as a client sends it (`autoApply` defaults to false). */
export interface RatelimitInput {
  name: string;
  limit: number;
  duration: number;
  autoApply?: boolean;
}

/** The live identity with this externalId, created (meta `{}`) when missing. */
export function* upsertIdentityIn(records: Records, workspaceId: string, externalId: string, nowMs: number): Work<IdentitySummary> {
  const found = yield* step(records.identities.findByExternalId(workspaceId, externalId));
  if (found) return found;
  const row = { id: newId("id"), workspaceId, externalId, meta: {}, createdAt: nowMs };
  try {
    yield records.identities.insert(row);
  } catch (error) {
    // Created by a unit that committed since this one looked (cluster): run again, which finds it.
    if (error instanceof DuplicateRecord) throw new LostRace(`identity '${externalId}' created`, { cause: error });
    throw error;
  }
  return { id: row.id, externalId, meta: row.meta };
}

/** The live identity of the workspace whose id, or else whose externalId, is `ref`. */
export function* findLiveIdentityIn(records: Records, workspaceId: string, ref: string): Work<IdentitySummary | undefined> {
  const byId = yield* step(records.identities.findInWorkspace(workspaceId, ref));
  return byId ?? (yield* step(records.identities.findByExternalId(workspaceId, ref)));
}

/**
 * Makes `limits` the owner's complete set of named limits, matched by name: a kept name keeps its
 * id (and so its counters' history), a missing name is deleted, a new one is created.
 */
export function* replaceRatelimitsIn(records: Records, workspaceId: string, owner: RatelimitOwner, limits: readonly RatelimitInput[], nowMs: number): Work<void> {
  const existing = new Map((yield* step(records.limits.load(owner))).map((c) => [c.name, c]));
  const wanted = new Set(limits.map((l) => l.name));
  yield records.limits.delete([...existing.values()].filter((c) => !wanted.has(c.name)).map((c) => c.id));
  for (const l of limits) {
    const kept = existing.get(l.name);
    const values = { limit: l.limit, durationMs: l.duration, autoApply: l.autoApply ?? false };
    if (kept) yield records.limits.update(kept.id, values, nowMs);
    else yield records.limits.insert({ id: newId("rl"), workspaceId, owner, name: l.name, ...values, createdAt: nowMs });
  }
}
