/**
 * A query process's lifeline, a thread of its own: it blocks reading stdin, a pipe whose other end
 * only the pool in `serve` holds and never writes to. However `serve` ends, SIGKILL included, the
 * kernel closes that end, the read returns, and this thread kills its process at once, even while
 * the main thread is inside a native SQLite loop that no JavaScript reaches. (Linux's
 * PR_SET_PDEATHSIG would do the same, but JavaScript cannot set it.)
 */
import { readSync } from "node:fs";

/** Error codes after which the read is simply tried again. */
const RETRY = new Set(["EAGAIN", "EINTR"]);
const RETRY_PAUSE_MS = 100;

function holdLifeline(): void {
  const buffer = new Uint8Array(64);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      // 0 is the end of the pipe: `serve` is gone. Bytes are never sent; should some come, read on.
      if (readSync(0, buffer) === 0) break;
    } catch (error) {
      if (!RETRY.has((error as NodeJS.ErrnoException).code ?? "")) break;
      // A non-blocking stdin: wait without spinning, then look again.
      Atomics.wait(pause, 0, 0, RETRY_PAUSE_MS);
    }
  }
  process.kill(process.pid, "SIGKILL");
}

holdLifeline();
