/**
 * The in-flight counters alone (http/in-flight.ts): the cap, the unauthenticated share (held only
 * by a cluster node's root-key lookup, which the embedded harness never waits for), the share of
 * one address, exact even for requests admitted before any address was looked at, and releases
 * that never leak nor count twice. The served behaviour is in keyless.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors/app-error.ts";
import { InFlight, type InFlightSlot } from "../../src/http/in-flight.ts";

/** Requests whose "server" is simply their client address. */
function counters(max: number, unauthenticatedPercent = 25, perAddressPercent = 50) {
  const lookups: string[] = [];
  const inFlight = new InFlight<string>({ max, unauthenticatedPercent, perAddressPercent }, (_, address) => {
    lookups.push(address);
    return address;
  });
  const admit = (address: string, authenticated = true) => inFlight.admit(new Request("http://x/"), address, authenticated);
  return { inFlight, admit, lookups };
}

function refused(admit: () => unknown): string {
  try {
    admit();
  } catch (error) {
    if (error instanceof AppError && error.code === "overloaded" && error.retryAfterS === 1) return error.detail;
    throw error;
  }
  throw new Error("admitted");
}

describe("InFlight", () => {
  test("the cap: max requests, then 503; a released slot comes back", () => {
    const { inFlight, admit } = counters(4, 25, 100);
    const slots = ["a", "b", "c", "d"].map((address) => admit(address));
    expect(refused(() => admit("e"))).toContain("(4)");
    inFlight.release(slots[0]!);
    admit("e");
  });

  test("requests not yet authenticated hold at most their share; once authenticated they leave it", () => {
    const { inFlight, admit } = counters(8, 25, 100);
    const waiting = [admit("a", false), admit("b", false)];
    expect(refused(() => admit("c", false))).toContain("not yet authenticated as it accepts (2)");
    // Authenticated callers still get in.
    admit("d");
    inFlight.authenticated(waiting[0]!);
    admit("c", false);
    expect(inFlight.counts()).toMatchObject({ total: 4, unauthenticated: 2 });
  });

  test("one address holds at most its share, counted exactly; addresses are looked up only once that share could be reached", () => {
    const { inFlight, admit, lookups } = counters(8);
    const quiet = [admit("a"), admit("a"), admit("a"), admit("a")];
    expect(lookups).toEqual([]);
    // Past the share's size in all: the four earlier ones are looked up, once each, and the fifth is refused.
    expect(refused(() => admit("a"))).toContain("client address");
    expect(lookups).toEqual(["a", "a", "a", "a", "a"]);
    admit("b");
    expect(refused(() => admit("a"))).toContain("(4)");
    inFlight.release(quiet[0]!);
    admit("a");
    expect(inFlight.counts()).toMatchObject({ total: 5, addresses: 2 });
  });

  test("a slot released twice counts once; everything released leaves nothing counted", () => {
    const { inFlight, admit } = counters(8);
    const slots: InFlightSlot[] = [];
    for (const address of ["a", "a", "a", "a", "b", "c"]) slots.push(admit(address, address !== "b"));
    for (const slot of slots) {
      inFlight.release(slot);
      inFlight.release(slot);
      inFlight.authenticated(slot);
    }
    expect(inFlight.counts()).toEqual({ total: 0, unauthenticated: 0, addresses: 0 });
  });
});
