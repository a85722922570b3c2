/**
 * System tools some checks need (systemd-analyze, qemu-user, Chromium, unshare, zsh). Where one is
 * missing a check is skipped, saying why, except under REQUIRE_TEST_TOOLS=1 (set by .ci/run, which
 * installs them): there it runs and fails, since a skipped check shows nothing.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { postgresBin } from "./servers.ts";

export const TOOLS_REQUIRED = process.env.REQUIRE_TEST_TOOLS === "1";

/** Whether to skip the checks that need what `missing` names (undefined: nothing is missing). */
export function skipWithout(missing: string | undefined, checks: string): boolean {
  if (missing === undefined) return false;
  if (TOOLS_REQUIRED) return false;
  console.warn(`skipping ${checks}: ${missing}`);
  return true;
}

/** For beforeAll of such checks: fails them when the tool is missing after all (REQUIRE_TEST_TOOLS=1). */
export function requireTool(missing: string | undefined): void {
  if (missing !== undefined) throw new Error(`${missing} (REQUIRE_TEST_TOOLS=1: not skipped)`);
}

const program = (name: string, pkg: string) => (Bun.which(name) ? undefined : `${name} is not installed (apt-get install -y ${pkg})`);

/** The sysroot qemu-user needs for the arm64 binary's glibc (Debian's libc6-arm64-cross). */
export const AARCH64_SYSROOT = "/usr/aarch64-linux-gnu";

export const missing = {
  systemdAnalyze: () => program("systemd-analyze", "systemd"),
  chromium: () => program("chromium", "chromium"),
  unshare: () => program("unshare", "util-linux"),
  zsh: () => program("zsh", "zsh"),
  postgres: () => (postgresBin() ? undefined : "PostgreSQL is not installed (apt-get install -y postgresql)"),
  redis: () => program("redis-server", "redis-server"),
  qemuAarch64: () =>
    program("qemu-aarch64", "qemu-user libc6-arm64-cross")
    ?? (existsSync(join(AARCH64_SYSROOT, "lib", "ld-linux-aarch64.so.1")) ? undefined : `no arm64 glibc in ${AARCH64_SYSROOT} (apt-get install -y libc6-arm64-cross)`),
};
