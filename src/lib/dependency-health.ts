/**
 * Whether each shared server a node depends on (PostgreSQL, Redis) answers, and what requests met
 * while it did not: one warning when an outage starts and one when it ends (never one a request),
 * a gauge per server for /metrics, and counters of the requests that failed open (let through as
 * TOLLGATE_REDIS_UNREACHABLE=open says) or closed (refused, or answered service_unavailable).
 * Why a state here rather than in readiness: every node shares these servers, so their outage is
 * not a reason to take one node out of a balancer; it is a reason to tell the operator, once.
 */
import type { Logger } from "./logger.ts";

export interface DependencyState {
  name: string;
  up: boolean;
  failedOpen: number;
  failedClosed: number;
}

interface Tracked extends DependencyState {
  /** performance.now() when it went down. */
  downSinceMs: number;
}

export class DependencyHealth {
  private readonly tracked = new Map<string, Tracked>();

  constructor(private readonly logger: Logger, names: readonly string[]) {
    for (const name of names) this.tracked.set(name, { name, up: true, failedOpen: 0, failedClosed: 0, downSinceMs: 0 });
  }

  /** `name` did not answer (a probe, or a request); `reason` names the client's code, never an address. */
  down(name: string, reason: string): void {
    const t = this.tracked.get(name);
    if (t === undefined || !t.up) return;
    t.up = false;
    t.downSinceMs = performance.now();
    this.logger.warn(`${name} is unreachable`, { dependency: name, reason });
  }

  /** `name` answered a probe. */
  up(name: string): void {
    const t = this.tracked.get(name);
    if (t === undefined || t.up) return;
    t.up = true;
    this.logger.warn(`${name} is reachable again`, { dependency: name, downMs: Math.round(performance.now() - t.downSinceMs), failedOpen: t.failedOpen, failedClosed: t.failedClosed });
  }

  /** A request that `name`'s absence made fail open (let through) or closed (refused or unavailable). */
  failed(name: string, how: "open" | "closed", reason: string): void {
    const t = this.tracked.get(name);
    if (t === undefined) return;
    if (how === "open") t.failedOpen++;
    else t.failedClosed++;
    this.down(name, reason);
  }

  states(): DependencyState[] {
    return [...this.tracked.values()].map(({ name, up, failedOpen, failedClosed }) => ({ name, up, failedOpen, failedClosed }));
  }
}
