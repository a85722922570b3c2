/** The fair queue of analytics queries: each workspace's share, and who runs next. */
import { describe, expect, test } from "bun:test";
import { FairQueue } from "../../../src/services/analytics/fair-queue.ts";

const startAll = (q: FairQueue<string>) => {
  const out: string[] = [];
  for (let next = q.start(); next; next = q.start()) out.push(next.item);
  return out;
};

describe("FairQueue", () => {
  test("a workspace holds at most running + waiting; one that finished makes room", () => {
    const q = new FairQueue<string>({ running: 1, waiting: 2 });
    expect(["a1", "a2", "a3", "a4"].map((item) => q.enqueue("a", item))).toEqual([true, true, true, false]);
    expect(q.enqueue("b", "b1")).toBe(true);
    expect(q.start()?.item).toBe("a1");
    expect(q.enqueue("a", "a4")).toBe(false);
    q.finished("a");
    expect(q.enqueue("a", "a4")).toBe(true);
  });

  test("no more than `running` of a workspace start at once", () => {
    const q = new FairQueue<string>({ running: 2, waiting: 5 });
    for (const item of ["a1", "a2", "a3"]) q.enqueue("a", item);
    expect(q.startableItems()).toEqual(["a1", "a2"]);
    expect(startAll(q)).toEqual(["a1", "a2"]);
    expect(q.startableItems()).toEqual([]);
    q.finished("a");
    expect(q.startableItems()).toEqual(["a3"]);
    expect(startAll(q)).toEqual(["a3"]);
  });

  test("the workspace whose last query started longest ago goes first, whoever queued first", () => {
    const q = new FairQueue<string>({ running: 1, waiting: 3 });
    q.enqueue("busy", "busy1");
    expect(q.start()?.item).toBe("busy1");
    q.enqueue("busy", "busy2");
    q.enqueue("quiet", "quiet1");
    q.finished("busy");
    expect(startAll(q)).toEqual(["quiet1", "busy2"]);
  });

  test("with several running allowed, the workspace running fewer goes first", () => {
    const q = new FairQueue<string>({ running: 2, waiting: 3 });
    q.enqueue("a", "a1");
    q.enqueue("b", "b1");
    expect(startAll(q)).toEqual(["a1", "b1"]);
    q.enqueue("a", "a2");
    q.enqueue("b", "b2");
    q.finished("b");
    expect(q.start()?.item).toBe("b2");
  });

  test("withdraw takes back a waiting query; drain empties every workspace", () => {
    const q = new FairQueue<string>({ running: 1, waiting: 3 });
    q.enqueue("a", "a1");
    q.enqueue("a", "a2");
    q.enqueue("b", "b1");
    expect(q.withdraw("a", "a2")).toBe(true);
    expect(q.withdraw("a", "a2")).toBe(false);
    expect(q.waitingCount()).toBe(2);
    expect(q.drain().sort()).toEqual(["a1", "b1"]);
    expect(q.start()).toBeUndefined();
  });
});
