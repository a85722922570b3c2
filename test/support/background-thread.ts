/** A worker that lowers its own priority (src/lib/thread-priority.ts) and says whether it did, and which thread it is. */
import { readlinkSync } from "node:fs";
import { runInBackground } from "../../src/lib/thread-priority.ts";

declare var self: Worker;

self.onmessage = () => {
  const lowered = runInBackground();
  postMessage({ lowered, tid: Number(readlinkSync("/proc/thread-self").split("/").pop()) });
};
