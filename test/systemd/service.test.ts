/**
 * tollgate.service under a real systemd: the built x64 binary with the unit as shipped (only its
 * ExecStart points where the binary is mounted, /srv/bin) in a container booted by systemd-nspawn
 * from this machine's /usr (see test/support/nspawn.ts). It starts at boot as a transient user with
 * the full hardening and serves keys, verifications and analytics (JIT, worker threads, WASM under
 * the system-call filter); the README's backup and restore commands work as written; `systemctl
 * stop` ends it with 0 and the WAL folded in; `systemctl start` returns once it answers ready, and
 * fails, the service stopped, when it never does; a crash is restarted, a configuration error is not.
 * Needs root, systemd-container and util-linux.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { binaryPath, build } from "../../build.ts";
import { parseDurationMs } from "../../src/lib/duration.ts";
import { BUILD_TIMEOUT_MS } from "../support/binary.ts";
import { environEntries, freePort, SERVE_ALLOCATOR_ENTRIES } from "../support/cli.ts";
import { bootContainer, nspawnMissing, type Container } from "../support/nspawn.ts";
import { readmeBlock } from "../support/readme.ts";
import { requireTool, skipWithout } from "../support/tools.ts";

const ROOT = resolve(import.meta.dir, "../..");
const STATE = "/var/lib/private/tollgate";
const missing = nspawnMissing();

describe.skipIf(skipWithout(missing, "tollgate.service under systemd"))("tollgate.service under systemd", () => {
  const host = mkdtempSync(join(tmpdir(), "tollgate-systemd-"));
  // The container shares the host's network.
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  let machine: Container;
  let rootKey = "";

  const sh = (script: string) => machine.run(["bash", "-c", script]);
  const post = async (path: string, body: unknown) => {
    const res = await fetch(url + path, { method: "POST", headers: { authorization: `Bearer ${rootKey}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** Waits (bounded) until `check` holds: the unit's state changes on systemd's schedule, not ours. */
  const until = async <T>(what: string, probe: () => T | Promise<T>, check: (v: T) => boolean, timeoutMs = 20_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let value = await probe();
    while (!check(value)) {
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms\n${sh("journalctl -u tollgate --no-pager -n 30").stdout}`);
      await Bun.sleep(50);
      value = await probe();
    }
    return value;
  };
  const live = () => until("liveness", () => fetch(`${url}/v2/liveness`).then((r) => r.status, () => 0), (s) => s === 200);

  beforeAll(async () => {
    requireTool(missing);
    await build(["x64"]);
    for (const dir of ["bin", "etc"]) mkdirSync(join(host, dir));
    copyFileSync(binaryPath("x64"), join(host, "bin", "tollgate"));
    const unit = readFileSync(join(ROOT, "systemd", "tollgate.service"), "utf8");
    writeFileSync(join(host, "tollgate.service"), unit.replaceAll("=/usr/local/bin/tollgate ", "=/srv/bin/tollgate "));
    writeFileSync(join(host, "etc", "env"), `TOLLGATE_PORT=${port}\n`, { mode: 0o600 });
    machine = await bootContainer(`tollgate-test-${process.pid}`, [
      `${join(host, "bin")}:/srv/bin`,
      `${join(host, "tollgate.service")}:/etc/systemd/system/tollgate.service`,
      `${join(host, "etc")}:/etc/tollgate`,
    ], ["tollgate.service"]);
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await machine?.stop();
    rmSync(host, { recursive: true, force: true });
  }, 60_000);

  test("starts at boot with the settings of /etc/tollgate/env, as a transient user owning only its state", async () => {
    await live();
    // Enabled from its [Install] section (the preset does what `systemctl enable` does), and the only unit enabled.
    const enabled = sh("systemctl list-unit-files --state=enabled --no-legend --no-pager").stdout.trim().split("\n").map((l) => l.split(/\s+/)[0]);
    expect(enabled).toEqual(["tollgate.service"]);
    expect(machine.show("tollgate", "ActiveState", "DynamicUser", "User")).toEqual({ ActiveState: "active", DynamicUser: "yes", User: "tollgate" });
    const uid = sh(`stat -c %u /proc/$(systemctl show -p MainPID --value tollgate)`).stdout.trim();
    expect(Number(uid)).toBeGreaterThanOrEqual(61184); // systemd's range for dynamic users
    expect(sh(`stat -c '%a %u' ${STATE} ${STATE}/tollgate.db ${STATE}/analytics.db ${STATE}/master.key ${STATE}/bootstrap-root-key`).stdout.trim().split("\n"))
      .toEqual([`700 ${uid}`, `600 ${uid}`, `600 ${uid}`, `600 ${uid}`, `600 ${uid}`]);
    rootKey = sh(`cat ${STATE}/bootstrap-root-key`).stdout.trim();
    expect(rootKey.length).toBeGreaterThan(16);
    // The allocator setting of src/cli/allocator.ts is in effect under the unit (which sets it, sparing the re-exec).
    const environ = environEntries(sh("cat /proc/$(systemctl show -p MainPID --value tollgate)/environ").stdout);
    expect(environ).toEqual(expect.arrayContaining([...SERVE_ALLOCATOR_ENTRIES]));
  });

  test("serves keys, verifications and analytics under the hardening; the CLI works beside it as root", async () => {
    const api = await post("/v2/apis.createApi", { name: "systemd-api" });
    const key = await post("/v2/keys.createKey", { apiId: api.body.data.apiId, credits: { remaining: 1000 } });
    for (let i = 0; i < 200; i++) expect((await post("/v2/keys.verifyKey", { key: key.body.data.key })).body.data.valid).toBe(true);
    expect(sh("TOLLGATE_DATA_DIR=/var/lib/tollgate /srv/bin/tollgate workspace update default --analytics on").code).toBe(0);
    const counted = await until("analytics", () => post("/v2/analytics.getVerifications", { query: "SELECT count() AS n FROM key_verifications_v1" }),
      (r) => r.status === 200 && r.body.data[0]?.n === 200);
    expect(counted.body.data).toEqual([{ n: 200 }]);
    // The event writer and the query worker lowered their threads' priority under the unit's
    // system call filter (it allows setpriority); the thread that answers requests kept its own.
    const niceness = sh(`cd /proc/$(systemctl show -p MainPID --value tollgate) && for t in task/*; do echo "$(basename $t) $(cut -d')' -f2 $t/stat | cut -d' ' -f18)"; done`)
      .stdout.trim().split("\n").map((line) => line.split(" ").map(Number));
    const mainPid = Number(machine.show("tollgate", "MainPID").MainPID);
    expect(niceness.filter(([tid]) => tid === mainPid).map(([, nice]) => nice)).toEqual([0]);
    expect(niceness.filter(([, nice]) => nice === 10).length).toBeGreaterThanOrEqual(2);
    // Nothing in the journal but request lines and start-up: no denied system call, no error.
    expect(sh("journalctl -u tollgate --no-pager -o cat | grep -v '\"level\":\"info\"' | grep -v '^Start\\|^Started'").stdout).toBe("");
  });

  test("the README's backup and restore, as written: the restored service has what the backup had", async () => {
    const before = await post("/v2/apis.createApi", { name: "in-the-backup" });
    const script = (block: string) => `set -euo pipefail; sudo() { env "$@"; }; export PATH=/srv/bin:$PATH\n${block}`;
    const backup = sh(script(readmeBlock("### Backup and restore")));
    expect(backup.code).toBe(0);
    const after = await post("/v2/apis.createApi", { name: "after-the-backup" });
    expect(after.status).toBe(200);
    const restore = sh(script(readmeBlock("To restore, stop the service")));
    expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: "" });
    await live();
    expect((await post("/v2/apis.getApi", { apiId: before.body.data.apiId })).status).toBe(200);
    expect((await post("/v2/apis.getApi", { apiId: after.body.data.apiId })).status).toBe(404);
  });

  test("systemctl stop: SIGTERM, exit 0, the WALs folded into tollgate.db and analytics.db", async () => {
    expect(sh("systemctl stop tollgate").code).toBe(0);
    expect(machine.show("tollgate", "ActiveState", "Result", "ExecMainStatus")).toEqual({ ActiveState: "inactive", Result: "success", ExecMainStatus: "0" });
    expect(sh("journalctl -u tollgate --no-pager -o cat -n 10").stdout).toContain('"msg":"stopped"');
    for (const file of ["tollgate.db", "analytics.db"]) expect(sh(`stat -c %s ${STATE}/${file}-wal 2>/dev/null || echo 0`).stdout.trim()).toBe("0");
  });

  test("systemctl start returns once the service answers ready on the port of /etc/tollgate/env: active, and a request answers at once", async () => {
    expect(sh("systemctl start tollgate").code).toBe(0);
    expect(sh("systemctl is-active tollgate").stdout.trim()).toBe("active");
    expect((await fetch(`${url}/v2/readiness`)).status).toBe(200);
    expect((await post("/v2/apis.createApi", { name: "right-after-start" })).status).toBe(200);
  });

  /** Runs `fn` with the unit's start check replaced by `check` (a drop-in), then undoes it and starts the service as shipped. */
  const withStartCheck = async (check: string, fn: () => Promise<void>) => {
    const dropIn = "/run/systemd/system/tollgate.service.d";
    expect(sh(`mkdir -p ${dropIn} && printf '[Service]\\nExecStartPost=\\nExecStartPost=%s\\n' '${check}' > ${dropIn}/check.conf && systemctl daemon-reload`).code).toBe(0);
    expect(sh("systemctl stop tollgate").code).toBe(0);
    try {
      await fn();
    } finally {
      sh(`rm -r ${dropIn}; systemctl daemon-reload; systemctl stop tollgate; systemctl reset-failed tollgate`);
    }
    expect(sh("systemctl start tollgate").code).toBe(0);
    expect((await fetch(`${url}/v2/readiness`)).status).toBe(200);
  };
  /** The unit's start check as shipped (with the binary where the container has it). */
  const shippedCheckLine = () => /^ExecStartPost=(.*)$/m.exec(readFileSync(join(host, "tollgate.service"), "utf8"))![1]!;
  /** The shipped start check with a shorter bound, so that a test need not wait out the real one. */
  const shippedCheck = (wait: string) => shippedCheckLine().replace(/--wait \S+/, `--wait ${wait}`);
  /** The unit's state once systemd has finished stopping the service. */
  const settled = () => until("the stop", () => machine.show("tollgate", "ActiveState", "SubState", "Result", "MainPID", "ExecMainStatus"), (s) => s.ActiveState !== "deactivating");

  test("never ready within the bound: the start fails, the service is stopped and the unit ends failed, not restarted", async () => {
    // Asked on a port where nothing answers: the service itself starts as usual.
    await withStartCheck(`/usr/bin/env TOLLGATE_PORT=1 ${shippedCheck("2s")}`, async () => {
      const start = sh("systemctl start tollgate");
      expect(start.code).not.toBe(0);
      // Had systemd scheduled a restart, the unit would wait in "auto-restart" instead.
      expect(await settled()).toEqual({ ActiveState: "failed", SubState: "failed", Result: "exit-code", MainPID: "0", ExecMainStatus: "0" });
      expect(sh("journalctl -u tollgate --no-pager -o cat -n 30").stdout).toContain("not ready: nothing answers on http://127.0.0.1:1/v2/readiness");
    });
  });

  test("a database it cannot write: the start fails with the reason and the service is stopped", async () => {
    await withStartCheck(shippedCheck("2s"), async () => {
      // The service's dynamic user cannot write a file of mode 0400, though it owns it.
      expect(sh(`chmod 0400 ${STATE}/tollgate.db`).code).toBe(0);
      try {
        expect(sh("systemctl start tollgate").code).not.toBe(0);
        const state = await settled();
        // Its stop could not write the database either (exit 1), which Restart=on-failure restarts.
        expect(state).toMatchObject({ ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", MainPID: "0", ExecMainStatus: "1" });
        expect(sh("journalctl -u tollgate --no-pager -o cat -n 30").stdout).toContain("not ready: tollgate.db is not writable");
      } finally {
        // SQLite gave the -shm file it created the database's mode.
        sh(`chmod 0600 ${STATE}/tollgate.db*`);
      }
    });
  });

  test("the service dies while starting (its port taken): the start fails at once, not after the check's bound", async () => {
    const busy = freePort();
    // Another program on the port, in a process of its own: sh() blocks this one's event loop.
    const other = Bun.spawn(["bun", "-e", `Bun.serve({ hostname: "127.0.0.1", port: ${busy}, fetch: () => new Response("", { status: 404 }) })`], { stdout: "ignore", stderr: "ignore" });
    try {
      await until("the other program", () => fetch(`http://127.0.0.1:${busy}/`).then((r) => r.status, () => 0), (s) => s === 404);
      writeFileSync(join(host, "etc", "env"), `TOLLGATE_PORT=${busy}\n`);
      expect(sh("systemctl stop tollgate").code).toBe(0);
      const startedMs = Date.now();
      expect(sh("systemctl start tollgate").code).not.toBe(0);
      expect(Date.now() - startedMs).toBeLessThan(parseDurationMs(/--wait (\S+)/.exec(shippedCheckLine())![1]!) / 3);
      const journal = sh("journalctl -u tollgate --no-pager -o cat -n 30").stdout;
      expect(journal).toContain("address in use");
      expect(journal).toMatch(/not ready: process \d+ has ended; /);
    } finally {
      process.kill(other.pid, "SIGKILL");
      writeFileSync(join(host, "etc", "env"), `TOLLGATE_PORT=${port}\n`);
      sh("systemctl stop tollgate; systemctl reset-failed tollgate");
    }
    expect(sh("systemctl start tollgate").code).toBe(0);
  });

  test("a crash is restarted (Restart=on-failure)", async () => {
    expect(sh("systemctl start tollgate").code).toBe(0);
    await live();
    expect(sh("systemctl kill --signal=SIGKILL tollgate").code).toBe(0);
    await until("the restart", () => machine.show("tollgate", "NRestarts", "ActiveState"), (s) => s.NRestarts === "1" && s.ActiveState === "active");
    await live();
  });

  test("a configuration error (exit 78) is not restarted", async () => {
    writeFileSync(join(host, "etc", "env"), `TOLLGATE_PORT=${port}\nTOLLGATE_LOG_LEVEL=loud\n`);
    sh("systemctl restart tollgate");
    // Had systemd scheduled a restart, the unit would wait in "auto-restart" instead.
    const state = await until("the failure", () => machine.show("tollgate", "ActiveState", "SubState", "Result", "ExecMainStatus"), (s) => s.ActiveState === "failed");
    expect(state).toEqual({ ActiveState: "failed", SubState: "failed", Result: "exit-code", ExecMainStatus: "78" });
    expect(sh("journalctl -u tollgate --no-pager -o cat").stdout).toContain("TOLLGATE_LOG_LEVEL must be one of debug, info, warn, error");
  });
});
