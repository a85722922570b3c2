/**
 * The per-workspace least-recently-used lists over slots: order, touch, removal from any position,
 * restore order (oldest added last), and the bytes charged per workspace and in total.
 */
import { describe, expect, test } from "bun:test";
import { NO_SLOT, WorkspaceWindowLists, scopeBytes, windowBytes, WINDOW_FIXED_BYTES } from "../../../src/services/ratelimit/workspace-windows.ts";

function setup(capacity = 16) {
  const lists = new WorkspaceWindowLists();
  lists.fit(capacity);
  return lists;
}

describe("order", () => {
  test("added windows come first; the oldest is the tail", () => {
    const lists = setup();
    const ws = lists.findOrCreate("ws_a");
    for (const slot of [3, 7, 1]) lists.addNewest(ws, slot);
    expect(lists.newestFirst(ws)).toEqual([1, 7, 3]);
    expect([ws.head, ws.tail, ws.windows]).toEqual([1, 3, 3]);
  });

  test("touch moves a window to the front from the middle, the tail or the front", () => {
    const lists = setup();
    const ws = lists.findOrCreate("ws_a");
    for (const slot of [0, 1, 2, 3]) lists.addNewest(ws, slot);
    lists.touch(ws, 1);
    expect(lists.newestFirst(ws)).toEqual([1, 3, 2, 0]);
    lists.touch(ws, 0);
    expect(lists.newestFirst(ws)).toEqual([0, 1, 3, 2]);
    lists.touch(ws, 0);
    expect(lists.newestFirst(ws)).toEqual([0, 1, 3, 2]);
    expect(ws.tail).toBe(2);
  });

  test("remove keeps the rest in order, at every position, down to an empty list", () => {
    const lists = setup();
    const ws = lists.findOrCreate("ws_a");
    for (const slot of [0, 1, 2, 3, 4]) lists.addNewest(ws, slot);
    lists.remove(ws, 2);
    expect(lists.newestFirst(ws)).toEqual([4, 3, 1, 0]);
    lists.remove(ws, 4);
    lists.remove(ws, 0);
    expect(lists.newestFirst(ws)).toEqual([3, 1]);
    expect([ws.head, ws.tail]).toEqual([3, 1]);
    lists.remove(ws, 3);
    lists.remove(ws, 1);
    expect([ws.head, ws.tail, ws.windows]).toEqual([NO_SLOT, NO_SLOT, 0]);
  });

  test("a freed slot number joins another workspace's list without touching the first one", () => {
    const lists = setup();
    const a = lists.findOrCreate("ws_a");
    const b = lists.findOrCreate("ws_b");
    for (const slot of [0, 1, 2]) lists.addNewest(a, slot);
    lists.addNewest(b, 3);
    lists.remove(a, 1);
    lists.addNewest(b, 1);
    expect(lists.newestFirst(a)).toEqual([2, 0]);
    expect(lists.newestFirst(b)).toEqual([1, 3]);
  });

  test("addOldest builds the order a restore reads: newest first, each next one older", () => {
    const lists = setup();
    const ws = lists.findOrCreate("ws_a");
    for (const slot of [5, 6, 7]) lists.addOldest(ws, slot);
    expect(lists.newestFirst(ws)).toEqual([5, 6, 7]);
    lists.addNewest(ws, 8);
    expect(lists.newestFirst(ws)).toEqual([8, 5, 6, 7]);
  });

  test("a walk gives every workspace's windows, each from its least recently used, in steps", () => {
    const lists = setup();
    const a = lists.findOrCreate("ws_a");
    const b = lists.findOrCreate("ws_b");
    for (const slot of [0, 2, 4]) lists.addNewest(a, slot);
    for (const slot of [1, 3]) lists.addNewest(b, slot);
    lists.touch(a, 0);
    lists.beginWalk();
    expect([lists.walk(2), lists.walk(2), lists.walk(2), lists.walk(2)]).toEqual([[2, 4], [0, 1], [3], []]);
  });

  test("a walk is not derailed by the window it stands on moving to the front or going", () => {
    const lists = setup();
    const ws = lists.findOrCreate("ws_a");
    for (const slot of [0, 1, 2, 3, 4, 5]) lists.addNewest(ws, slot);
    lists.beginWalk();
    expect(lists.walk(2)).toEqual([0, 1]);
    lists.touch(ws, 2); // it stands on 2: moves on to 3, and meets 2 again at the front
    lists.touch(ws, 0); // already passed: met again too
    expect(lists.walk(1)).toEqual([3]);
    lists.remove(ws, 4); // it stands on 4, which goes
    expect(lists.walk(10)).toEqual([5, 2, 0]);
  });

  test("columns grow without losing the links", () => {
    const lists = setup(2);
    const ws = lists.findOrCreate("ws_a");
    lists.addNewest(ws, 0);
    lists.addNewest(ws, 1);
    lists.fit(8);
    lists.addNewest(ws, 5);
    lists.touch(ws, 0);
    expect(lists.newestFirst(ws)).toEqual([0, 5, 1]);
  });
});

describe("bytes", () => {
  test("a window costs its fixed part plus two bytes per UTF-16 code unit; a scope likewise", () => {
    expect(windowBytes("ab€")).toBe(WINDOW_FIXED_BYTES + 6);
    expect(scopeBytes("ws|ns") - scopeBytes("")).toBe(10);
  });

  test("charges count per workspace and in total; an empty workspace is forgotten", () => {
    const lists = setup();
    const a = lists.findOrCreate("ws_a");
    const b = lists.findOrCreate("ws_b");
    lists.charge(a, 100);
    lists.charge(b, 50);
    expect([a.bytes, b.bytes, lists.totalBytes, lists.workspaces]).toEqual([100, 50, 150, 2]);
    lists.refund(b, 50);
    lists.releaseIfEmpty(b);
    lists.releaseIfEmpty(a);
    expect([lists.totalBytes, lists.workspaces, lists.find("ws_a")]).toEqual([100, 1, a]);
    expect(lists.find("ws_b")).toBeUndefined();
  });
});
