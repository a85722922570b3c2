/**
 * The README's "Try it" block, run by bash as a reader pastes it, to the letter: in a directory
 * laid out like a checkout (the sources linked in), beside `serve` on its default data dir
 * `./data`. Tests use no fixed port, so the server's is given as TOLLGATE_PORT, which the block
 * reads as the reader's own shell would hold it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { environWithoutSettings, ROOT, SOURCE_PROGRAM, startServe, type Served } from "../support/cli.ts";
import { readmeBlock } from "../support/readme.ts";

const CHECKOUT_ENTRIES = ["src", "migrations", "node_modules", "package.json", "tsconfig.json", "bunfig.toml"];

describe("README: Try it", () => {
  const checkout = mkdtempSync(join(tmpdir(), "tollgate-readme-"));
  let served: Served;

  beforeAll(async () => {
    for (const entry of CHECKOUT_ENTRIES) symlinkSync(join(ROOT, entry), join(checkout, entry));
    served = await startServe({ dataDir: join(checkout, "data"), program: { ...SOURCE_PROGRAM, cwd: checkout } });
  });
  afterAll(async () => {
    await served?.stop();
    rmSync(checkout, { recursive: true, force: true });
  });

  test("the block runs as written: the key verifies VALID with a credit spent, and the bootstrap key lists it", () => {
    const block = readmeBlock("## Try it");
    expect(block).toContain("${TOLLGATE_PORT:-8080}");
    const port = new URL(served.url).port;
    // Each command's output on its own line, so the two answers can be told apart.
    const script = `set -euo pipefail\n${block.replace(/^(curl .*)$/gm, "$1; echo")}`;
    const run = Bun.spawnSync(["bash", "-c", script], { cwd: checkout, env: { ...environWithoutSettings(), TOLLGATE_PORT: port }, stdout: "pipe", stderr: "pipe" });
    const stderr = run.stderr.toString();
    expect(run.exitCode, stderr).toBe(0);
    const [verified, listed] = run.stdout.toString().trim().split("\n").map((line) => JSON.parse(line));
    expect(verified.data).toMatchObject({ valid: true, code: "VALID", credits: 99 });
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ keyId: verified.data.keyId, credits: { remaining: 99 } });
  }, 60_000);
});
