/**
 * Processes seen through /proc (Linux): the children of a process that run a given command, and
 * whether a process is gone. A killed child whose parent is gone too may stay a zombie when nothing
 * reaps it (PID 1 in a container); a zombie runs nothing, so it counts as gone.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Field 3 (state) and field 4 (parent PID) of /proc/<pid>/stat; undefined once the process is gone. */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** The PIDs of `parentPid`'s live children whose command line contains `marker`. */
export function childPids(parentPid: number, marker: string): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    const stat = statOf(pid);
    if (stat?.ppid !== parentPid || stat.state === "Z") return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });
}

/** Whether `pid` no longer runs: gone from /proc, or a zombie. */
export function isGone(pid: number): boolean {
  const stat = statOf(pid);
  return stat === undefined || stat.state === "Z";
}

/** CPU time (user + system) that `pid` has used so far, in ms; undefined once it is gone. */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime (fields 14 and 15), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** The niceness of each thread of `pid` (field 19 of its stat); empty once it is gone. */
export function threadNiceness(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        return [Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** The paths `pid` has open; empty once it is gone. */
export function openFiles(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** `list` when it holds something, for waitFor (an empty array is truthy). */
export function nonEmpty<T>(list: T[]): T[] | undefined {
  return list.length > 0 ? list : undefined;
}

/** Resolves with the first truthy value of `probe`, checked every 20 ms; rejects after `timeoutMs`. */
export async function waitFor<T>(probe: () => T | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(20);
  }
}
