/**
 * The cap on v2 operations in flight, and the shares within it that no flood can take from
 * authenticated callers. A request holds a slot from its admission to its answer; while it is not
 * yet authenticated (a cluster node looking its root key up in PostgreSQL) it may hold only the
 * unauthenticated share, and one client address (behind trusted proxies, the forwarded one) only
 * its own share, whatever its class. Beyond either: 503 `overloaded`, and the connection is closed
 * (the refused request's body is left unread). A request whose root key fails is never admitted:
 * it is answered at once (pipeline.ts).
 *
 * Our own counters, not Bun's `pendingRequests`: that one also counts every request read in this
 * turn and answered at its end, so a flood of requests refused at once would fill it. The pipeline
 * releases each slot in a `finally`, which every way out of a request passes (a client that goes
 * away makes its body read fail; a body that never comes, its deadline).
 *
 * Finding a request's address costs about as much as the rest of a cached verification, so it is
 * found only once the requests in flight reach an address's share, the first moment one address
 * could pass it: the requests admitted before then have theirs found at that moment, once each.
 * A quiet service finds none.
 */
import { AppError } from "../errors/app-error.ts";

export interface InFlightLimits {
  /** Requests in flight in all (TOLLGATE_MAX_REQUESTS_IN_FLIGHT). */
  max: number;
  /** Percent of `max` requests not yet authenticated may hold. */
  unauthenticatedPercent: number;
  /** Percent of `max` one client address may hold. */
  perAddressPercent: number;
}

/** One admitted request's hold on the capacity; give it back with `release`, once. */
export interface InFlightSlot {
  authenticated: boolean;
  /** Its client address once counted against it (undefined when unknown); null while not yet looked at. */
  address: string | undefined | null;
  released: boolean;
  readonly request: Request;
  readonly server: unknown;
}

/** Who sent a request: its client address, or undefined when unknown. */
export type AddressOf<S> = (request: Request, server: S) => string | undefined;

function overloaded(detail: string): AppError {
  return new AppError("overloaded", { detail: `${detail}; retry shortly.`, retryAfterS: 1 });
}

export class InFlight<S> {
  private total = 0;
  private unauthenticated = 0;
  private readonly byAddress = new Map<string, number>();
  /** Slots admitted while no address could be near its share: their addresses not yet counted. */
  private readonly unattributed = new Set<InFlightSlot>();
  private readonly unauthenticatedMax: number;
  private readonly perAddressMax: number;

  constructor(private readonly limits: InFlightLimits, private readonly addressOf: AddressOf<S>) {
    this.unauthenticatedMax = Math.max(1, Math.floor((limits.max * limits.unauthenticatedPercent) / 100));
    this.perAddressMax = Math.max(1, Math.floor((limits.max * limits.perAddressPercent) / 100));
  }

  /** Requests in flight: in all, not yet authenticated, and the addresses counted. For tests. */
  counts(): { total: number; unauthenticated: number; addresses: number } {
    return { total: this.total, unauthenticated: this.unauthenticated, addresses: this.byAddress.size };
  }

  /** Admits a request, authenticated or not yet; throws 503 `overloaded` when the cap or its share is full. */
  admit(request: Request, server: S, authenticated: boolean): InFlightSlot {
    const { max } = this.limits;
    if (this.total >= max) throw overloaded(`The service is answering as many requests at once as it accepts (${max})`);
    if (!authenticated && this.unauthenticated >= this.unauthenticatedMax) {
      throw overloaded(`The service is answering as many requests not yet authenticated as it accepts (${this.unauthenticatedMax})`);
    }
    const slot: InFlightSlot = { authenticated, address: null, released: false, request, server };
    if (this.total < this.perAddressMax) this.unattributed.add(slot);
    else {
      for (const earlier of this.unattributed) this.attribute(earlier, this.addressOf(earlier.request, earlier.server as S));
      this.unattributed.clear();
      const address = this.addressOf(request, server);
      if (address !== undefined && (this.byAddress.get(address) ?? 0) >= this.perAddressMax) {
        throw overloaded(`This client address holds as many requests at once as one address may (${this.perAddressMax})`);
      }
      this.attribute(slot, address);
    }
    this.total++;
    if (!authenticated) this.unauthenticated++;
    return slot;
  }

  /** Counts the slot against its client address. */
  private attribute(slot: InFlightSlot, address: string | undefined): void {
    slot.address = address;
    if (address !== undefined) this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
  }

  /** The slot's request is now authenticated: it leaves the unauthenticated share. */
  authenticated(slot: InFlightSlot): void {
    if (slot.authenticated || slot.released) return;
    slot.authenticated = true;
    this.unauthenticated--;
  }

  /** Gives the slot back; a second call does nothing. */
  release(slot: InFlightSlot): void {
    if (slot.released) return;
    slot.released = true;
    this.total--;
    if (!slot.authenticated) this.unauthenticated--;
    this.unattributed.delete(slot);
    if (slot.address === null || slot.address === undefined) return;
    const held = (this.byAddress.get(slot.address) ?? 1) - 1;
    if (held <= 0) this.byAddress.delete(slot.address);
    else this.byAddress.set(slot.address, held);
  }
}
