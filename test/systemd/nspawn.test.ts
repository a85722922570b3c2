/**
 * The container helper finds the container's init, not the intermediate child nspawn forks first:
 * aimed at that short-lived process, every nsenter failed and the boot seemed never to finish.
 * Here a parent has a plain child and a child that is PID 1 of a new PID namespace (unshare
 * --fork makes it a grandchild, so its direct parent has it as the only candidate).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { containerInit } from "../support/nspawn.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const unshare = missing.unshare() ?? (process.getuid?.() === 0 ? undefined : "a new PID namespace needs root");

describe.skipIf(skipWithout(unshare, "finding the container's init"))("finding the container's init", () => {
  const spawned: number[] = [];
  afterAll(() => {
    for (const pid of spawned) process.kill(pid, "SIGKILL");
  });

  /** Children of `pid`, polled until `count` have appeared (bounded). */
  const children = async (pid: number, count: number): Promise<number[]> => {
    for (let i = 0; i < 200; i++) {
      const out = Bun.spawnSync(["pgrep", "-P", String(pid)], { stdout: "pipe" }).stdout.toString().trim();
      const pids = out.split("\n").filter(Boolean).map(Number);
      if (pids.length >= count) return pids;
      await Bun.sleep(10);
    }
    throw new Error(`${pid} has fewer than ${count} children`);
  };

  test("only a process that is PID 1 of its own namespace is taken", async () => {
    requireTool(unshare);
    // A plain child (like nspawn's intermediate one) beside an unshare whose child is an init.
    const parent = Bun.spawn(["bash", "-c", "sleep 60 & unshare --pid --fork sleep 60 & wait"], { stdout: "ignore", stderr: "ignore" });
    spawned.push(parent.pid);
    const [first, second] = await children(parent.pid, 2);
    expect(containerInit(parent.pid)).toBeUndefined();
    const unshareProcess = Bun.spawnSync(["pgrep", "-P", String(parent.pid), "-x", "unshare"], { stdout: "pipe" }).stdout.toString().trim();
    expect([first, second]).toContain(Number(unshareProcess));
    const [init] = await children(Number(unshareProcess), 1);
    spawned.push(first!, second!, init!);
    expect(containerInit(Number(unshareProcess))).toBe(init);
  });
});
