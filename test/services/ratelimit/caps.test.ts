/**
 * The limiter's memory caps (window-slots.ts): over its own cap a workspace gives up its least
 * recently used window and never another workspace's; with the total reached, expired windows go
 * first, then the workspace's own, and a workspace with nothing to give is answered without state;
 * a batch never gives up its own windows; evicted slots leave the flush bookkeeping consistent; a
 * restore keeps the newest windows up to the caps.
 */
import { describe, expect, test } from "bun:test";
import { SlidingWindowLimiter, type LimitRequest, type WindowRow } from "../../../src/services/ratelimit/sliding-window.ts";
import { scopeBytes, windowBytes, type WindowCaps } from "../../../src/services/ratelimit/workspace-windows.ts";
import { TestClock } from "../../support/test-clock.ts";

const MINUTE = 60_000;
const T0 = 1_700_000_040_000;

/** Identifiers of one length, so that every window costs the same. */
const id = (prefix: string, i: number) => `${prefix}${i}`;
const scopeOf = (ws: string) => `${ws}|ns`;
/** Bytes of `windows` two-character windows in one scope of `ws`. */
const bytesFor = (ws: string, windows: number) => scopeBytes(scopeOf(ws)) + windows * windowBytes("x0");

function setup(caps: WindowCaps) {
  const clock = new TestClock(T0);
  return { clock, limiter: new SlidingWindowLimiter({ clock, caps }) };
}

const req = (ws: string, identifier: string, cost = 1, durationMs = MINUTE): LimitRequest =>
  ({ workspace: ws, scope: scopeOf(ws), identifier, limit: 10, durationMs, cost });
const remaining = (limiter: SlidingWindowLimiter, ws: string, identifier: string, durationMs = MINUTE) =>
  limiter.check(req(ws, identifier, 0, durationMs)).remaining;

describe("per-workspace cap", () => {
  test("filling A past its cap gives up A's least recently used window; B's counters keep their counts", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 3), totalBytes: Number.POSITIVE_INFINITY });
    for (const i of [0, 1, 2]) limiter.check(req("A", id("a", i), 2));
    for (const i of [0, 1, 2]) limiter.check(req("B", id("b", i), 3));
    limiter.check(req("A", "a0")); // a0 is used again: a1 is now A's least recently used
    limiter.check(req("A", "a3", 4));
    expect(limiter.stats()).toMatchObject({ windows: 6, evicted: 1, unkept: 0 });
    expect(remaining(limiter, "A", "a1")).toBe(10); // its counter restarted
    expect([remaining(limiter, "A", "a0"), remaining(limiter, "A", "a2"), remaining(limiter, "A", "a3")]).toEqual([7, 8, 6]);
    for (const i of [0, 1, 2]) expect(remaining(limiter, "B", id("b", i))).toBe(7);
  });

  test("a denied check is a use too: the exhausted window stays and the idle one goes", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 2), totalBytes: Number.POSITIVE_INFINITY });
    limiter.check(req("A", "a0", 10));
    limiter.check(req("A", "a1", 1));
    expect(limiter.check(req("A", "a0")).success).toBe(false);
    limiter.check(req("A", "a2"));
    expect(limiter.check(req("A", "a0")).success).toBe(false);
    expect(remaining(limiter, "A", "a1")).toBe(10);
  });

  test("the charged bytes follow the windows, and return to zero when they are pruned", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 3), totalBytes: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 10; i++) limiter.check(req("A", id("a", i)));
    expect(limiter.stats()).toMatchObject({ windows: 3, bytes: bytesFor("A", 3), workspaces: 1, evicted: 7 });
    limiter.prune(T0 + 2 * MINUTE);
    expect(limiter.stats()).toMatchObject({ windows: 0, bytes: 0, workspaces: 0 });
  });
});

describe("total cap", () => {
  const caps = { workspaceBytes: bytesFor("A", 3), totalBytes: bytesFor("A", 3) + bytesFor("B", 3) };

  /** A and B each hold three windows: the total is full. */
  function full(durationB = MINUTE) {
    const s = setup(caps);
    for (const i of [0, 1, 2]) s.limiter.check(req("A", id("a", i), 2));
    for (const i of [0, 1, 2]) s.limiter.check(req("B", id("b", i), 3, durationB));
    return s;
  }

  test("a third workspace's checks are answered from an empty window and nothing is kept; nobody's window is lost", () => {
    const { limiter } = full();
    expect(limiter.check(req("C", "c0", 4))).toMatchObject({ success: true, remaining: 6 });
    expect(limiter.check(req("C", "c0", 4))).toMatchObject({ success: true, remaining: 6 });
    expect(limiter.checkAll([req("C", "c1"), req("C", "c2")]).success).toBe(true);
    expect(limiter.stats()).toMatchObject({ windows: 6, evicted: 0, unkept: 4 });
    for (const i of [0, 1, 2]) expect([remaining(limiter, "A", id("a", i)), remaining(limiter, "B", id("b", i))]).toEqual([8, 7]);
  });

  test("expired windows of any workspace make room before anything else", () => {
    const { clock, limiter } = full(1000);
    clock.advance(2000); // B's one-second windows weigh nothing any more
    limiter.check(req("C", "c0", 4));
    expect(remaining(limiter, "C", "c0")).toBe(6);
    expect(limiter.stats().unkept).toBe(0);
    for (const i of [0, 1, 2]) expect(remaining(limiter, "A", id("a", i))).toBe(8);
  });

  test("a workspace that holds windows gives up its own oldest, not another's", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 3), totalBytes: bytesFor("A", 3) + bytesFor("B", 1) });
    for (const i of [0, 1, 2]) limiter.check(req("A", id("a", i), 2));
    limiter.check(req("B", "b0", 3));
    limiter.check(req("B", "b1", 5));
    expect(limiter.stats()).toMatchObject({ windows: 4, evicted: 1, unkept: 0 });
    expect([remaining(limiter, "B", "b0"), remaining(limiter, "B", "b1")]).toEqual([10, 5]);
    for (const i of [0, 1, 2]) expect(remaining(limiter, "A", id("a", i))).toBe(8);
  });

  test("a batch never gives up its own windows: with nothing else to give, its new windows are not kept", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 3), totalBytes: bytesFor("A", 3) + bytesFor("C", 1) });
    for (const i of [0, 1, 2]) limiter.check(req("A", id("a", i)));
    limiter.check(req("C", "c0"));
    expect(limiter.checkAll([req("C", "c0", 2), req("C", "c1", 2)]).success).toBe(true);
    expect(remaining(limiter, "C", "c0")).toBe(7);
    expect(limiter.stats()).toMatchObject({ evicted: 0, unkept: 1 });
  });
});

describe("eviction and the flush bookkeeping", () => {
  test("an evicted window leaves no dirty mark; its reused slot flushes its new counter", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 3), totalBytes: Number.POSITIVE_INFINITY });
    for (const i of [0, 1, 2]) limiter.check(req("A", id("a", i)));
    limiter.check(req("A", "a3")); // evicts a0, still dirty
    const queued = limiter.takeDirty();
    expect(queued.map((slot) => limiter.windowOf(slot)!.identifier).sort()).toEqual(["a1", "a2", "a3"]);
    limiter.check(req("A", "a4", 5)); // evicts a1 and takes its slot
    const reused = queued.find((slot) => limiter.windowOf(slot)?.identifier === "a4");
    expect(reused).toBeDefined();
    expect(limiter.windowOf(reused!)).toMatchObject({ workspace: "A", identifier: "a4", count: 5 });
    limiter.markDirty(queued); // a failed flush puts its slots back: the reused one now names a4
    expect(limiter.takeDirty().map((slot) => limiter.windowOf(slot)!.identifier).sort()).toEqual(["a2", "a3", "a4"]);
  });
});

describe("restore under the caps", () => {
  const row = (ws: string, identifier: string, count: number): WindowRow =>
    ({ workspace: ws, scope: scopeOf(ws), durationMs: MINUTE, identifier, windowStartMs: T0, count, previousCount: 0 });

  test("rows come newest first: a counter keeps its newest state, and each workspace keeps its newest windows up to its cap", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 2), totalBytes: bytesFor("A", 2) + bytesFor("B", 1) });
    const newestFirst = [row("A", "a9", 9), row("B", "b9", 9), row("A", "a9", 1), row("A", "a8", 8), row("B", "b8", 8), row("A", "a7", 7)];
    expect(newestFirst.map((r) => limiter.restore(r))).toEqual([true, true, false, true, false, false]);
    expect([remaining(limiter, "A", "a9"), remaining(limiter, "A", "a8"), remaining(limiter, "B", "b9")]).toEqual([1, 2, 1]);
    expect(limiter.size).toBe(3);
    expect(limiter.takeDirty().length).toBe(3); // the checks above used them; the restore itself marked nothing
  });

  test("the restored order continues: the oldest restored window is the first to go", () => {
    const { limiter } = setup({ workspaceBytes: bytesFor("A", 2), totalBytes: Number.POSITIVE_INFINITY });
    limiter.restore(row("A", "a9", 9));
    limiter.restore(row("A", "a8", 8));
    limiter.check(req("A", "n0"));
    expect(remaining(limiter, "A", "a9")).toBe(1);
    expect(remaining(limiter, "A", "a8")).toBe(10);
  });
});
