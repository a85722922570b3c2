/**
 * Background threads yield the CPU to the thread that answers requests. On a small machine the
 * event writer, the WAL checkpointers and the analytics queries run on the same cores as the HTTP
 * thread and the clients; at the same priority the kernel shares a core between them evenly, and
 * every slice a background thread takes is a slice the HTTP thread waits. Raised by
 * BACKGROUND_NICENESS (Linux niceness is per thread), a background thread still runs whenever a
 * core is free and still gets about a tenth of a core when none is, so its work keeps up, but it no
 * longer delays a verification. A process that only does background work (an analytics query
 * process) lowers all its threads further still.
 */
import { readdirSync, readlinkSync } from "node:fs";
import os from "node:os";

/** Added to the thread's niceness: a weight of about a tenth of the HTTP thread's. */
export const BACKGROUND_NICENESS = 10;

/** The lowest priority: a thread at it runs when nothing else wants the core. */
export const MAX_NICENESS = 19;

/**
 * Lowers the calling thread's priority. Only a worker thread's, never the process's main thread
 * (on Linux its thread id is the process id, and its niceness the whole process's default). Returns
 * whether it took effect: not on systems without per-thread niceness, nor where the call is refused
 * (a service manager may filter it; lowering a priority never needs a privilege).
 */
export function runInBackground(by = BACKGROUND_NICENESS): boolean {
  if (process.platform !== "linux") return false;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0 || tid === process.pid) return false;
    os.setPriority(tid, Math.min(MAX_NICENESS, os.getPriority(tid) + by));
    return true;
  } catch {
    return false;
  }
}

/**
 * Puts every thread of the calling process at the lowest priority (niceness 19), for a process
 * that only does work for callers who can wait (an analytics query process). Below the background
 * threads of `serve` too: at equal weight such a process would take their share as well, and
 * `serve`'s request thread can wait on a lock one of them holds. Threads started afterwards inherit
 * the niceness of the thread that starts them. Returns whether any thread was lowered; not on
 * systems without per-thread niceness.
 */
export function runProcessAtLowestPriority(): boolean {
  if (process.platform !== "linux") return false;
  let threads: string[];
  try {
    threads = readdirSync("/proc/self/task");
  } catch {
    return false;
  }
  let lowered = false;
  for (const entry of threads) {
    try {
      os.setPriority(Number(entry), MAX_NICENESS);
      lowered = true;
    } catch {
      // The thread ended between the listing and the call, or the call is refused.
    }
  }
  return lowered;
}
