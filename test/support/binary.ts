/**
 * The compiled executable for e2e tests: built by build.ts (reused while dist/ matches the sources'
 * hash, so only the first test run after a change pays for the build) and copied alone into an
 * empty directory, which becomes its working directory: no node_modules, no sources beside it.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaryPath, build, type Target } from "../../build.ts";
import type { Program } from "./cli.ts";

/** Long enough to compile both targets and fetch the arm64 runtime once on a slow machine. */
export const BUILD_TIMEOUT_MS = 180_000;

export interface InstalledBinary {
  /** The empty directory holding only the binary (and, once it ran, its data). */
  dir: string;
  program: Program;
  cleanup(): void;
}

/** Builds `target` when stale, copies it into a fresh empty directory, and runs it from there. */
export async function installBinary(target: Target, runner: string[] = []): Promise<InstalledBinary> {
  await build([target]);
  const dir = mkdtempSync(join(tmpdir(), `tollgate-e2e-${target}-`));
  const binary = join(dir, "tollgate");
  copyFileSync(binaryPath(target), binary);
  return {
    dir,
    program: { command: [...runner, binary], cwd: dir },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
