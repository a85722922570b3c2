/**
 * What the service acknowledged, as the client saw it: the model the crash checks compare the
 * restarted service against. A request whose answer arrived is acknowledged and must survive a
 * SIGKILL; a request whose answer never arrived (in flight at the kill) may or may not have
 * happened, so it only widens what the check allows.
 */

export interface CreditKey {
  keyId: string;
  key: string;
  permissions: string[];
  /** The balance the service must hold if no unanswered spend happened. */
  expectedRemaining: number;
  /** Sum of the costs of spends whose answer never arrived: the balance may be lower by up to this. */
  unansweredSpend: number;
}

/** One `ratelimit.limit` call on the round's identifier. */
export interface LimitCall {
  cost: number;
  /** performance.now() when the answer arrived; undefined when it never did. */
  answeredAtMs?: number;
  /** The window end the answer named (Unix ms), to see whether the window rolled over. */
  resetMs?: number;
}

export class Ledger {
  readonly keys = new Map<string, CreditKey>();
  /** permission slug → id, for permissions made with createPermission. */
  readonly permissions = new Map<string, string>();
  /** override identifier → {overrideId, limit}. */
  readonly overrides = new Map<string, { overrideId: string; limit: number; duration: number }>();
  /** Ids of every record an acknowledged change created: each must be named by an audit entry. */
  readonly audited = new Set<string>();

  addKey(k: Omit<CreditKey, "unansweredSpend">): void {
    this.keys.set(k.keyId, { ...k, unansweredSpend: 0 });
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

  /** After a check, the balance read back becomes the model: unanswered spends are settled. */
  settle(keyId: string, remaining: number): void {
    const k = this.keys.get(keyId)!;
    k.expectedRemaining = remaining;
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
