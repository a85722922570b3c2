/**
 * systemd/: tollgate.env.example lists every variable of src/config.ts with its real default, and
 * tollgate.service carries the settings the install relies on and passes `systemd-analyze verify`
 * (skipped, saying so, where systemd-analyze is not installed).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.ts";

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
    ["CapabilityBoundingSet", ""],
    ["ExecStart", "/usr/local/bin/tollgate serve"],
  ])("sets %s=%s", (key, value) => {
    expect(valuesOf(key)).toContain(value);
  });

  test("leaves MemoryDenyWriteExecute out (Bun's JIT needs writable executable memory) and says why", () => {
    expect(valuesOf("MemoryDenyWriteExecute")).toEqual([]);
    expect(unit).toMatch(/#\s+MemoryDenyWriteExecute=yes\s+Bun's JavaScript engine/);
  });

  test("gives the graceful stop more time than TOLLGATE_SHUTDOWN_TIMEOUT_MS's default", () => {
    const stopSec = Number(valuesOf("TimeoutStopSec")[0]);
    expect(stopSec * 1000).toBeGreaterThan(loadConfig({}).shutdownTimeoutMs);
  });

  const analyze = Bun.which("systemd-analyze");
  test.skipIf(!analyze)(`systemd-analyze verify passes${analyze ? "" : " (skipped: systemd-analyze is not installed; apt-get install systemd)"}`, async () => {
    // verify checks that ExecStart's program exists; point it at one that does.
    const dir = mkdtempSync(join(tmpdir(), "tollgate-unit-"));
    try {
      const file = join(dir, "tollgate.service");
      writeFileSync(file, unit.replace("ExecStart=/usr/local/bin/tollgate", `ExecStart=${process.execPath}`));
      const proc = Bun.spawn([analyze!, "verify", file], { stdout: "pipe", stderr: "pipe" });
      const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
