/**
 * `bun run build` (build.ts): both executables in dist/ with SHA-256 sums, nothing beside them that
 * they need (source maps embedded), no `.env` or `bunfig.toml` read from where they run, and the
 * arm64 cross-compile done with no network at all (its runtime from the npm package, not a download).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaryPath, build, DIST, ROOT, TARGETS } from "../../build.ts";
import { runCli } from "../support/cli.ts";
import { BUILD_TIMEOUT_MS, installBinary, type InstalledBinary } from "../support/binary.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

/** ELF e_machine: 62 is x86-64, 183 is AArch64. */
const elfMachine = async (file: string) => Buffer.from(await Bun.file(file).slice(0, 20).arrayBuffer()).readUInt16LE(18);

async function run(cmd: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe("dist/", () => {
  beforeAll(() => build(TARGETS), BUILD_TIMEOUT_MS);

  test("holds tollgate-linux-x64 for x86-64 and tollgate-linux-arm64 for AArch64", async () => {
    expect(await Promise.all(TARGETS.map((t) => elfMachine(binaryPath(t))))).toEqual([62, 183]);
  });

  test("SHA256SUMS lists both and sha256sum -c accepts it", async () => {
    expect(readFileSync(join(DIST, "SHA256SUMS"), "utf8")).toMatch(/^[0-9a-f]{64} {2}tollgate-linux-x64\n[0-9a-f]{64} {2}tollgate-linux-arm64\n$/);
    const check = await run(["sha256sum", "-c", "SHA256SUMS"], DIST);
    expect(check).toMatchObject({ code: 0, stdout: "tollgate-linux-x64: OK\ntollgate-linux-arm64: OK\n" });
  });

  test("has no source maps or other files beside the executables", () => {
    expect(readdirSync(DIST).filter((f) => !f.startsWith(".")).sort()).toEqual(["SHA256SUMS", "tollgate-linux-arm64", "tollgate-linux-x64"]);
  });
});

describe("the x64 executable, alone in an empty directory", () => {
  let installed: InstalledBinary;
  beforeAll(async () => {
    installed = await installBinary("x64");
  }, BUILD_TIMEOUT_MS);
  afterAll(() => installed?.cleanup());

  test("reads no .env or bunfig.toml from its working directory", async () => {
    // Either, if read, would break the command: a bad log level is a configuration error (78), and the
    // preload would write the marker file.
    writeFileSync(join(installed.dir, ".env"), "TOLLGATE_LOG_LEVEL=not-a-level\n");
    writeFileSync(join(installed.dir, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
    writeFileSync(join(installed.dir, "preload.ts"), 'require("node:fs").writeFileSync("preloaded", "yes");\n');
    const r = await runCli(["workspace", "list"], { dataDir: join(installed.dir, "data"), program: installed.program });
    expect(r).toMatchObject({ code: 0, stdout: expect.stringContaining("default") });
    expect(existsSync(join(installed.dir, "preloaded"))).toBe(false);
  });

  test("its stack traces name the TypeScript sources: the source map is embedded", async () => {
    const notADirectory = join(installed.dir, "a-file");
    writeFileSync(notADirectory, "");
    const r = await runCli(["workspace", "list"], { dataDir: join(notADirectory, "data"), program: installed.program, env: { TOLLGATE_LOG_LEVEL: "debug" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("ENOTDIR");
    expect(r.stderr).toMatch(/at \S+ \(src\/boot\.ts:\d+:\d+\)/);
    expect(r.stderr).toMatch(/src\/cli\/index\.ts:\d+:\d+/);
  });
});

const unshare = missing.unshare();

describe.skipIf(skipWithout(unshare, "the offline cross-compile"))("cross-compiling for arm64", () => {
  const out = mkdtempSync(join(tmpdir(), "tollgate-offline-build-"));
  // The first build fetched the runtime package (npm pack) into node_modules/.cache.
  beforeAll(async () => {
    requireTool(unshare);
    await build(["arm64"]);
  }, BUILD_TIMEOUT_MS);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test("works with no network: the runtime is handed to the compiler, never downloaded", async () => {
    // A new network namespace has only a loopback interface that is down: nothing is reachable.
    const offline = await run(["unshare", "--net", "bun", "run", "build.ts", "--target", "arm64", "--force", "--outdir", out]);
    expect(offline).toMatchObject({ code: 0 });
    expect(await elfMachine(binaryPath("arm64", out))).toBe(183);
    const probe = await run(["unshare", "--net", "bun", "-e", "await fetch('https://registry.npmjs.org/')"]);
    expect(probe.code).not.toBe(0);
  }, BUILD_TIMEOUT_MS);
});
