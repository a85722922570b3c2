/**
 * Rate limits of a verification (upstream §6.3): the key's limits and its identity's by name, the
 * key's winning a tie; every autoApply limit at cost 1 unless the request names it; each named limit
 * at the request's cost; `limit`+`duration` in the request make an ad-hoc limit on the key. All are
 * checked together and charged all-or-nothing.
 */
import { AppError } from "../../errors/app-error.ts";
import type { RatelimitConfig } from "../identities/index.ts";
import { effectiveDurationMs, type BatchResult, type LimitRequest, type WindowLimiter } from "../ratelimit/index.ts";
import type { Maybe } from "../../storage/work.ts";
import type { KeySnapshot } from "./snapshot.ts";

export interface RequestedLimit {
  name: string;
  cost?: number;
  limit?: number;
  duration?: number;
}

export interface RatelimitState {
  id: string;
  name: string;
  limit: number;
  remaining: number;
  reset: number;
  exceeded: boolean;
  duration: number;
  autoApply: boolean;
}

interface PlannedCheck {
  config: RatelimitConfig;
  /** Who the counter belongs to: the key, or the identity for an identity limit. */
  ownerId: string;
  cost: number;
}

/** Which limits this verification checks, and at what cost; 412 for a name nobody configured. */
function plan(snap: KeySnapshot, requested: readonly RequestedLimit[]): PlannedCheck[] {
  const byName = new Map<string, { config: RatelimitConfig; ownerId: string }>();
  for (const c of snap.identity?.ratelimits ?? []) byName.set(c.name, { config: c, ownerId: snap.identity!.id });
  for (const c of snap.ratelimits) byName.set(c.name, { config: c, ownerId: snap.keyId });
  const checks = new Map<string, PlannedCheck>();
  for (const { config, ownerId } of byName.values()) {
    if (config.autoApply) checks.set(config.name, { config, ownerId, cost: 1 });
  }
  for (const r of requested) {
    const cost = r.cost ?? 1;
    if (r.limit !== undefined && r.duration !== undefined) {
      checks.set(r.name, { config: { id: "", name: r.name, limit: r.limit, duration: r.duration, autoApply: false }, ownerId: snap.keyId, cost });
      continue;
    }
    const found = byName.get(r.name);
    if (!found) throw unknownLimit(snap, r.name);
    checks.set(r.name, { ...found, cost });
  }
  return [...checks.values()];
}

function unknownLimit(snap: KeySnapshot, name: string): AppError {
  const detail = snap.identity
    ? `ratelimit '${name}' was requested but does not exist for key '${snap.keyId}' nor identity: '${snap.identity.id}' external ID: '${snap.identity.externalId}'`
    : `ratelimit '${name}' was requested but does not exist for key '${snap.keyId}' and there is no identity connected.`;
  return new AppError("precondition_failed", { detail });
}

export interface RatelimitOutcome {
  passed: boolean;
  states: RatelimitState[];
}

/** Checks and (when all pass) charges the limits; undefined when the key has none to check. */
export function applyRatelimits(limiter: WindowLimiter, snap: KeySnapshot, requested: readonly RequestedLimit[]): Maybe<RatelimitOutcome | undefined> {
  if (requested.length === 0 && snap.ratelimits.length === 0 && !snap.identity?.ratelimits.length) return undefined;
  const checks = plan(snap, requested);
  if (checks.length === 0) return undefined;
  // One scope per workspace for every key and identity limit; the counter is (name, owner).
  const scope = `${snap.workspaceId}|key-limit`;
  const requests: LimitRequest[] = checks.map((c) => ({
    workspace: snap.workspaceId,
    scope,
    identifier: `${c.config.name}|${c.ownerId}`,
    limit: c.config.limit,
    // A limit stored by an older version may lie outside today's bounds: it is applied clamped into them.
    durationMs: effectiveDurationMs(c.config.duration),
    cost: c.cost,
  }));
  const batch = limiter.checkAll(requests);
  if (batch instanceof Promise) return batch.then((decided) => outcomeOf(checks, requests, decided));
  return outcomeOf(checks, requests, batch);
}

function outcomeOf(checks: readonly PlannedCheck[], requests: readonly LimitRequest[], batch: BatchResult): RatelimitOutcome {
  const states = checks.map((c, i) => {
    const r = batch.results[i]!;
    return {
      id: c.config.id, name: c.config.name, limit: c.config.limit, remaining: r.remaining, reset: r.resetMs,
      exceeded: !r.success, duration: requests[i]!.durationMs, autoApply: c.config.autoApply,
    };
  });
  return { passed: batch.success, states };
}
