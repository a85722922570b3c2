/**
 * systemd/: tollgate.env.example lists exactly the variables src/config.ts reads, each with its real
 * default; tollgate.service carries the settings the install relies on (among them the start check
 * on readiness, with room for its bound in TimeoutStartSec), passes `systemd-analyze verify` with
 * the built binary as its ExecStart and ExecStartPost, and has the `systemd-analyze security` exposure
 * that README.md records. Needs systemd-analyze (Debian's systemd package).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { binaryPath, build } from "../../build.ts";
import { READY_REQUEST_TIMEOUT_MS } from "../../src/cli/ready.ts";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.ts";
import { parseDurationMs } from "../../src/lib/duration.ts";
import { BUILD_TIMEOUT_MS } from "../support/binary.ts";
import { SERVE_ALLOCATOR_ENTRIES } from "../support/cli.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const SYSTEMD = resolve(import.meta.dir, "../../systemd");
const example = readFileSync(join(SYSTEMD, "tollgate.env.example"), "utf8");
const unit = readFileSync(join(SYSTEMD, "tollgate.service"), "utf8");

/** `# NAME=value` lines of the example, in order. */
const exampleEntries = [...example.matchAll(/^# (TOLLGATE_[A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!] as const);

/** The unit's active `Key=value` lines (comments dropped), as [key, value] pairs. */
const directives = unit.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#") && !l.startsWith("["))
  .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const);
const valuesOf = (key: string) => directives.filter(([k]) => k === key).map(([, v]) => v);

describe("tollgate.env.example", () => {
  test("lists every variable of CONFIG_VARIABLES exactly once, and nothing else", () => {
    const names = exampleEntries.map(([name]) => name);
    expect(names.toSorted()).toEqual(CONFIG_VARIABLES.map(([name]) => name).toSorted());
    expect(new Set(names).size).toBe(names.length);
  });

  test("lists exactly the variables loadConfig reads", () => {
    const read = new Set<string>();
    const env = new Proxy({}, {
      get(_, name) {
        if (typeof name === "string") read.add(name);
        return undefined;
      },
    });
    loadConfig(env);
    expect([...read].toSorted()).toEqual(exampleEntries.map(([name]) => name).toSorted());
  });

  test("each value shown is that variable's default", () => {
    const defaults = loadConfig({});
    for (const [name, value] of exampleEntries) {
      expect({ name, config: loadConfig({ [name]: value }) }).toEqual({ name, config: defaults });
    }
  });

  test("every line is a comment or blank, so the file as installed changes nothing", () => {
    expect(example.split("\n").filter((l) => l.trim() && !l.startsWith("#"))).toEqual([]);
  });
});

describe("tollgate.service", () => {
  test.each([
    ["DynamicUser", "yes"],
    ["StateDirectory", "tollgate"],
    ["EnvironmentFile", "-/etc/tollgate/env"],
    ["Environment", "TOLLGATE_DATA_DIR=/var/lib/tollgate"],
    ["Restart", "on-failure"],
    ["RestartPreventExitStatus", "78"],
    ["NoNewPrivileges", "yes"],
    ["ProtectSystem", "strict"],
    ["ProtectHome", "yes"],
    ["PrivateTmp", "yes"],
    ["PrivateDevices", "yes"],
    ["RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"],
    ["SystemCallFilter", "@system-service"],
    ["SystemCallFilter", "~@privileged @resources"],
    ["ProcSubset", "pid"],
    ["ProtectProc", "invisible"],
    ["CapabilityBoundingSet", ""],
    ["ExecStart", "/usr/local/bin/tollgate serve"],
    ["ExecStartPost", "/usr/local/bin/tollgate ready --wait 180s --pid $MAINPID"],
    ["RestartPreventExitStatus", "0 SIGTERM"],
  ])("sets %s=%s", (key, value) => {
    expect(valuesOf(key)).toContain(value);
  });

  test("leaves MemoryDenyWriteExecute out (Bun's JIT needs writable executable memory) and says why", () => {
    expect(valuesOf("MemoryDenyWriteExecute")).toEqual([]);
    expect(unit).toMatch(/#\s+MemoryDenyWriteExecute=yes\s+Bun's JavaScript engine/);
  });

  test("sets the allocator setting serve runs with, so that the start needs no re-exec", () => {
    expect(valuesOf("Environment")).toEqual(expect.arrayContaining([...SERVE_ALLOCATOR_ENTRIES]));
  });

  test("gives the start check's --wait and its last question less time than TimeoutStartSec", () => {
    const wait = /--wait (\S+)/.exec(valuesOf("ExecStartPost")[0] ?? "")?.[1] ?? "";
    const startSec = Number(valuesOf("TimeoutStartSec")[0]);
    expect(startSec * 1000).toBeGreaterThan(parseDurationMs(wait) + READY_REQUEST_TIMEOUT_MS);
  });

  test("gives the graceful stop more time than TOLLGATE_SHUTDOWN_TIMEOUT_MS's default", () => {
    const stopSec = Number(valuesOf("TimeoutStopSec")[0]);
    expect(stopSec * 1000).toBeGreaterThan(loadConfig({}).shutdownTimeoutMs);
  });
});

const analyzeMissing = missing.systemdAnalyze();

describe.skipIf(skipWithout(analyzeMissing, "systemd-analyze verify and security"))("systemd-analyze", () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-unit-"));
  const file = join(dir, "tollgate.service");
  const analyze = (...args: string[]) => {
    const proc = Bun.spawnSync(["systemd-analyze", ...args, file], { stdout: "pipe", stderr: "pipe" });
    return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
  };

  beforeAll(async () => {
    requireTool(analyzeMissing);
    // verify checks that ExecStart's and ExecStartPost's program exists: the copy points at the binary the install copies.
    await build(["x64"]);
    writeFileSync(file, unit.replaceAll("=/usr/local/bin/tollgate ", `=${binaryPath("x64")} `));
  }, BUILD_TIMEOUT_MS);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("verify passes without a warning", () => {
    expect(analyze("verify")).toMatchObject({ code: 0, stderr: "" });
  });

  test("security: the exposure README.md records, rated OK", () => {
    const report = analyze("security", "--offline=true", "--no-pager");
    expect(report.code).toBe(0);
    const measured = /Overall exposure level for tollgate\.service: (\d+\.\d) (\S+)/.exec(report.stdout);
    const recorded = /`systemd-analyze security` exposure: \*\*(\d+\.\d)\*\* \((\S+)\)/.exec(readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8"));
    expect({ measured: measured?.slice(1, 3) }).toEqual({ measured: recorded?.slice(1, 3) });
    expect(measured?.[2]).toBe("OK");
  });
});
