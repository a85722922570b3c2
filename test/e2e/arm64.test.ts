/**
 * The arm64 executable (64-bit Raspberry Pi OS) under qemu-user: it prints its version and answers
 * liveness, and SIGTERM stops it with 0. Skipped, saying why, where qemu-user is not installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import pkg from "../../package.json";
import { runCli, startServe } from "../support/cli.ts";
import { AARCH64_SYSROOT, BUILD_TIMEOUT_MS, installBinary, qemuMissing, type InstalledBinary } from "../support/binary.ts";

const missing = qemuMissing();
if (missing) console.warn(`skipping the arm64 e2e tests: ${missing}`);

/** Emulation makes start-up slower than on a real Pi. */
const QEMU_START_TIMEOUT_MS = 60_000;

describe.skipIf(missing !== undefined)(`arm64 binary under qemu-user${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let installed: InstalledBinary;
  beforeAll(async () => {
    installed = await installBinary("arm64", ["qemu-aarch64", "-L", AARCH64_SYSROOT]);
  }, BUILD_TIMEOUT_MS);
  afterAll(() => installed?.cleanup());

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
