/** Background threads run at a lower priority than the thread that answers requests (Linux). */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { BACKGROUND_NICENESS, runInBackground } from "../../src/lib/thread-priority.ts";
import { WorkerEventWriter } from "../../src/services/analytics/index.ts";
import { event, tempDb, type TempDb } from "../services/analytics/support.ts";
import { packEvents } from "../services/analytics/support.ts";

/** Each thread of this process: its id and niceness (field 19 of its stat). */
function threadNiceness(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

describe.skipIf(process.platform !== "linux")("runInBackground", () => {
  test("never lowers the main thread: the process's own niceness stays", () => {
    const before = threadNiceness().get(process.pid);
    expect(runInBackground()).toBe(false);
    expect(threadNiceness().get(process.pid)).toBe(before!);
  });

  test("in a worker, lowers that thread alone, by BACKGROUND_NICENESS", async () => {
    const main = threadNiceness().get(process.pid)!;
    const worker = new Worker(new URL("../support/background-thread.ts", import.meta.url));
    try {
      const reply = await new Promise<{ lowered: boolean; tid: number }>((resolve) => {
        worker.onmessage = (e) => resolve(e.data);
        worker.postMessage("go");
      });
      expect(reply.lowered).toBe(true);
      const now = threadNiceness();
      expect(now.get(reply.tid)).toBe(Math.min(19, main + BACKGROUND_NICENESS));
      expect(now.get(process.pid)).toBe(main);
    } finally {
      worker.terminate();
    }
  });
});

describe.skipIf(process.platform !== "linux")("the event writer's thread", () => {
  let db: TempDb;
  beforeEach(() => { db = tempDb(); });
  afterEach(() => { db.close(); });

  test("runs in the background once it writes", async () => {
    const main = threadNiceness().get(process.pid)!;
    const before = new Set(threadNiceness().keys());
    const writer = new WorkerEventWriter(db.storage.sqlite.filename);
    try {
      await writer.write(packEvents([event()]));
      const lowered = [...threadNiceness()].filter(([tid, nice]) => !before.has(tid) && nice === Math.min(19, main + BACKGROUND_NICENESS));
      expect(lowered.length).toBeGreaterThanOrEqual(1);
      expect(threadNiceness().get(process.pid)).toBe(main);
    } finally {
      await writer.close();
    }
  });
});
