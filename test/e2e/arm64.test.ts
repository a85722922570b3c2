/**
 * The arm64 executable (64-bit Raspberry Pi OS) under qemu-user: its runtime is the building Bun's
 * version, it prints its version, answers liveness from an empty directory, and SIGTERM stops it
 * with 0. Needs qemu-user and libc6-arm64-cross (see test/support/tools.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import pkg from "../../package.json";
import { runCli, startServe } from "../support/cli.ts";
import { BUILD_TIMEOUT_MS, installBinary, type InstalledBinary } from "../support/binary.ts";
import { AARCH64_SYSROOT, missing, requireTool, skipWithout } from "../support/tools.ts";

const qemu = missing.qemuAarch64();

/** Emulation makes start-up slower than on a real Pi. */
const QEMU_START_TIMEOUT_MS = 60_000;

describe.skipIf(skipWithout(qemu, "the arm64 binary under qemu-user"))("arm64 binary under qemu-user", () => {
  let installed: InstalledBinary;
  beforeAll(async () => {
    requireTool(qemu);
    installed = await installBinary("arm64", ["qemu-aarch64", "-L", AARCH64_SYSROOT]);
  }, BUILD_TIMEOUT_MS);
  afterAll(() => installed?.cleanup());

  test("embeds the runtime of the npm package @oven/bun-linux-aarch64 at the building Bun's version", async () => {
    // BUN_BE_BUN=1 makes a compiled executable act as the Bun it embeds.
    const r = await runCli(["--revision"], { dataDir: join(installed.dir, "data"), program: installed.program, env: { BUN_BE_BUN: "1" } });
    expect(r.code).toBe(0);
    // `<version>+<abbreviated commit>`, the same build as the Bun running this test.
    const [version, commit = ""] = r.stdout.trim().split("+");
    expect({ version, sameCommit: commit.length >= 7 && Bun.revision.startsWith(commit) }).toEqual({ version: Bun.version, sameCommit: true });
  }, QEMU_START_TIMEOUT_MS);

  test("version", async () => {
    const r = await runCli(["version"], { dataDir: join(installed.dir, "data"), program: installed.program });
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  }, QEMU_START_TIMEOUT_MS);

  test("serve answers liveness from an empty directory and stops on SIGTERM with 0", async () => {
    const served = await startServe({ dataDir: join(installed.dir, "data"), program: installed.program, startTimeoutMs: QEMU_START_TIMEOUT_MS });
    try {
      const res = await fetch(`${served.url}/v2/liveness`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown }).data).toEqual({ message: "we're cooking" });
      expect(await served.stop()).toBe(0);
    } finally {
      served.kill();
    }
  }, QEMU_START_TIMEOUT_MS * 2);
});
