/**
 * A throwaway `redis-server` (Debian's) on loopback for the peer benchmark: a free port, its own temp
 * dir, no RDB snapshots, and append-only persistence on or off. Stopped by its PID; the dir goes with it.
 */
import { rmSync } from "node:fs";
import { freePort, tempDir } from "../lib.ts";

export interface RedisServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** `appendonly`: "everysec" writes every command to the AOF and fsyncs it once a second (what survives a restart). */
export async function startRedis(persistence: "none" | "everysec", timeoutMs = 10_000): Promise<RedisServer> {
  const port = freePort();
  const dir = tempDir("tollgate-bench-redis-");
  const aof = persistence === "everysec" ? ["--appendonly", "yes", "--appendfsync", "everysec"] : ["--appendonly", "no"];
  const proc = Bun.spawn(["redis-server", "--bind", "127.0.0.1", "--port", String(port), "--save", "", ...aof, "--dir", dir], {
    stdout: "pipe", stderr: "inherit",
  });
  const stop = async () => {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const ready = await Promise.race([
    waitForLine(proc.stdout, "Ready to accept connections"),
    Bun.sleep(timeoutMs).then(() => false),
  ]);
  if (!ready) {
    proc.kill("SIGKILL");
    throw new Error(`redis-server on port ${port} did not get ready in ${timeoutMs} ms`);
  }
  return { url: `redis://127.0.0.1:${port}`, pid: proc.pid, stop };
}

/** Resolves true once `needle` shows up; then keeps draining the stream so redis never blocks on a full pipe. */
async function waitForLine(stream: ReadableStream<Uint8Array>, needle: string): Promise<boolean> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    seen += decoder.decode(value);
    if (seen.includes(needle)) {
      void (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })();
      return true;
    }
  }
}
