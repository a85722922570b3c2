/**
 * master.key created by racing processes: eight child processes load the master key of one
 * empty data dir at the same moment (test/storage/master-key-racer.ts); exactly one key is
 * created, every racer returns it, and the file holds it whole (0600).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/cli.ts";

const RACERS = 8;
const ROUNDS = 3;
const RACE_TIMEOUT_MS = 30_000;

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Reads a child's stdout line by line. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let partial = "";
  for await (const chunk of stream) {
    partial += decoder.decode(chunk, { stream: true });
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    yield* parts;
  }
  if (partial) yield partial;
}

/** Starts RACERS children on `dataDir`, waits until every one is ready, starts them at once; returns what each printed. */
async function race(dataDir: string): Promise<string[]> {
  const racers = Array.from({ length: RACERS }, () => {
    const proc = Bun.spawn(["bun", "run", join(ROOT, "test/storage/master-key-racer.ts"), dataDir], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
    return { proc, out: lines(proc.stdout) };
  });
  try {
    for (const r of racers) expect((await r.out.next()).value).toBe("ready");
    for (const r of racers) r.proc.stdin.write("go\n");
    for (const r of racers) void r.proc.stdin.flush();
    const keys = await Promise.all(racers.map(async (r) => (await r.out.next()).value as string));
    expect(await Promise.all(racers.map((r) => r.proc.exited))).toEqual(Array(RACERS).fill(0));
    return keys;
  } finally {
    for (const r of racers) if (r.proc.exitCode === null) process.kill(r.proc.pid, "SIGKILL");
  }
}

describe("master.key created by racing processes", () => {
  test("one key, returned by every racer, whole in the file (base64 of 32 bytes, 0600), no temp file left", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dataDir = mkdtempSync(join(tmpdir(), "tollgate-master-key-"));
      dirs.push(dataDir);
      const keys = await race(dataDir);
      const file = join(dataDir, "master.key");
      const stored = readFileSync(file, "utf8");
      expect(stored).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
      expect(Buffer.from(stored.trim(), "base64")).toHaveLength(32);
      expect(new Set(keys)).toEqual(new Set([stored.trim()]));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(dataDir)).toEqual(["master.key"]);
    }
  }, RACE_TIMEOUT_MS);
});
