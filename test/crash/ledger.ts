/**
 * What the service acknowledged, as the client saw it: the model the crash checks compare the
 * restarted service against. A request whose answer arrived is acknowledged and must survive a
 * SIGKILL; a request whose answer never arrived (in flight at the kill) may or may not have
 * happened, so it only widens what the check allows.
 * A key is changed by one request at a time (spends may overlap each other, never a change), so
 * each key's model is sequential: at a kill, a key has either unanswered spends or one unanswered change.
 */

/** What the service must hold for a key, as far as the acknowledged requests say. */
export interface KeyState {
  deleted: boolean;
  enabled: boolean;
  name: string | null;
  meta: Record<string, unknown> | null;
  /** Unix ms, known to lie in [from, to] (a reroll sets it from the server's clock); null: never expires. */
  expires: { from: number; to: number } | null;
  /** null: unlimited. */
  remaining: number | null;
}

export interface TrackedKey {
  keyId: string;
  /** The plaintext, as createKey or rerollKey answered it. */
  key: string;
  permissions: string[];
  state: KeyState;
  /** The state an unanswered change would have left: it may or may not have happened. */
  unansweredChange?: KeyState;
  /** Sum of the costs of spends whose answer never arrived: the balance may be lower by up to this. */
  unansweredSpend: number;
  /** Sum of the costs of spends in flight: the balance may already be lower by up to this. */
  spendingCost: number;
  /** Sum of the costs of every spend started so far, to tell which spends overlapped one another. */
  startedSpendCost: number;
  /** A change is in flight: no other request may use the key until it is answered. */
  changing: boolean;
}

/** One `ratelimit.limit` call on the round's identifier. */
export interface LimitCall {
  cost: number;
  /** performance.now() when the answer arrived; undefined when it never did. */
  answeredAtMs?: number;
  /** The window end the answer named (Unix ms), to see whether the window rolled over. */
  resetMs?: number;
}

/** A root key made with the CLI; once its revocation is acknowledged it must answer 401 for good. */
export interface TrackedRootKey {
  id: string;
  key: string;
  revoked: boolean;
}

/** Verification events: what was seen committed (it must survive a kill) and what could exist at most. */
export interface AnalyticsModel {
  /** The most events and spent credits an analytics query has answered so far. */
  seenEvents: number;
  seenSpent: number;
  /** verifyKey requests sent for keys of the workspace (each records at most one event) and their costs. */
  verificationsSent: number;
  costSent: number;
}

/** Whether `state` is expired at `nowMs`; undefined while its expiry's range holds `nowMs`. */
export function isExpired(state: KeyState, nowMs: number): boolean | undefined {
  if (state.expires === null || state.expires.from > nowMs) return false;
  return state.expires.to <= nowMs ? true : undefined;
}

/**
 * The code a verification of a key in `state` must answer whatever its credits, or undefined when
 * the credits decide; `EXPIRED?` while the key's expiry range holds `nowMs` (EXPIRED, or the credits decide).
 */
export function blockingCode(state: KeyState, nowMs: number): "NOT_FOUND" | "DISABLED" | "EXPIRED" | "EXPIRED?" | undefined {
  if (state.deleted) return "NOT_FOUND";
  if (!state.enabled) return "DISABLED";
  const expired = isExpired(state, nowMs);
  if (expired === undefined) return "EXPIRED?";
  return expired ? "EXPIRED" : undefined;
}

export class Ledger {
  readonly keys = new Map<string, TrackedKey>();
  /** permission slug → id, for permissions made with createPermission. */
  readonly permissions = new Map<string, string>();
  /** override identifier → {overrideId, limit}. */
  readonly overrides = new Map<string, { overrideId: string; limit: number; duration: number }>();
  /** Ids of every record an acknowledged change created or revoked: each must be named by an audit entry. */
  readonly audited = new Set<string>();
  readonly rootKeys: TrackedRootKey[] = [];
  readonly analytics: AnalyticsModel = { seenEvents: 0, seenSpent: 0, verificationsSent: 0, costSent: 0 };

  addKey(k: Pick<TrackedKey, "keyId" | "key" | "permissions" | "state">): void {
    this.keys.set(k.keyId, { ...k, unansweredSpend: 0, spendingCost: 0, startedSpendCost: 0, changing: false });
    this.audited.add(k.keyId);
  }

  addPermission(slug: string, id: string): void {
    this.permissions.set(slug, id);
    this.audited.add(id);
  }

  addOverride(identifier: string, o: { overrideId: string; limit: number; duration: number }): void {
    this.overrides.set(identifier, o);
    this.audited.add(o.overrideId);
  }

  /** Keys a spend may use now (no change in flight). */
  spendable(): TrackedKey[] {
    return [...this.keys.values()].filter((k) => !k.changing);
  }

  /** Keys a change may take now: not deleted, and nothing else in flight on them. */
  changeable(): TrackedKey[] {
    return [...this.keys.values()].filter((k) => !k.changing && k.spendingCost === 0 && !k.state.deleted);
  }

  /** After a check, the state read back becomes the model: unanswered requests are settled. */
  settle(k: TrackedKey, observed: KeyState): void {
    k.state = observed;
    k.unansweredChange = undefined;
    k.unansweredSpend = 0;
  }
}

/** Counts for the summary of a round. */
export interface RoundStats {
  acknowledged: number;
  unanswered: number;
  byOp: Record<string, number>;
}

export function emptyStats(): RoundStats {
  return { acknowledged: 0, unanswered: 0, byOp: {} };
}
