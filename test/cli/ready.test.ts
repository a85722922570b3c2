/**
 * `tollgate ready [--wait]` against a real `tollgate serve`: 0 when it answers ready, 1 with the
 * reason when it is not ready or nothing answers, and with --wait it keeps asking until a serve
 * started after it comes up, or until the process --pid names has ended. Unready is made from outside on the running service's tollgate.db (a
 * migration record of a newer version), since tests run as root, for whom a file's mode does not
 * make it read-only.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readinessUrl } from "../../src/cli/ready.ts";
import { DATABASE_FILE } from "../../src/storage/data-dir.ts";
import { freePort, runCli, startServe, tempDataDir } from "../support/cli.ts";
import { perTest } from "../support/cli-slots.ts";

const t = perTest();

/** `tollgate ready` with the data dir and `env` of this test. */
const ready = (args: string[], env: Record<string, string>) => runCli(["ready", ...args], { dataDir: t.data!.dir, env });

/** Starts serve on a port of its own choosing, and the environment that points `ready` at it. */
async function serve(env: Record<string, string> = {}): Promise<Record<string, string>> {
  t.data = tempDataDir();
  t.served = await startServe({ dataDir: t.data.dir, env });
  return { ...env, TOLLGATE_PORT: new URL(t.served.url).port };
}

/** Gives tollgate.db a migration record of a newer version while `fn` runs: the service is not ready. */
async function newerMigrationDuring(fn: () => Promise<void>): Promise<void> {
  const db = new Database(join(t.data!.dir, DATABASE_FILE));
  db.run("PRAGMA busy_timeout = 5000");
  db.run(`INSERT INTO "__drizzle_migrations" (hash, created_at) VALUES ('newer', 99999999999999)`);
  try {
    await fn();
  } finally {
    db.run(`DELETE FROM "__drizzle_migrations" WHERE hash = 'newer'`);
    db.close();
  }
}

describe("tollgate ready", () => {
  test("0: the service answers ready, nothing on stdout", async () => {
    const env = await serve();
    expect(await ready([], env)).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("0: a service listening on 0.0.0.0 is asked over 127.0.0.1", async () => {
    const env = await serve({ TOLLGATE_HOST: "0.0.0.0" });
    expect((await ready([], env)).code).toBe(0);
  });

  test("1: a service that is not ready, with the readiness check's detail on stderr; 0 once it is ready again", async () => {
    const env = await serve();
    await newerMigrationDuring(async () => {
      const r = await ready([], env);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe("not ready: tollgate.db has migrations of a newer tollgate version: run that version.");
      // With --wait the reason is the last answer's, once the time is up.
      const waited = await ready(["--wait", "300ms"], env);
      expect({ code: waited.code, stderr: waited.stderr.trim() })
        .toEqual({ code: 1, stderr: "not ready: tollgate.db has migrations of a newer tollgate version: run that version." });
    });
    expect((await ready([], env)).code).toBe(0);
  });

  test("1: nothing answers on the port", async () => {
    t.data = tempDataDir();
    const port = freePort();
    const r = await ready([], { TOLLGATE_PORT: String(port) });
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr.trim() })
      .toEqual({ code: 1, stdout: "", stderr: `not ready: nothing answers on http://127.0.0.1:${port}/v2/readiness` });
  });

  test("0: --wait keeps asking until a serve started after it answers ready", async () => {
    t.data = tempDataDir();
    const env = { TOLLGATE_PORT: String(freePort()) };
    const waiting = ready(["--wait", "60s"], env);
    t.served = await startServe({ dataDir: t.data.dir, env });
    expect(await waiting).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("1 before --wait's time is up: the process named by --pid ends while it waits", async () => {
    t.data = tempDataDir();
    const port = freePort();
    const service = Bun.spawn(["sleep", "600"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    const waiting = ready(["--wait", "60s", "--pid", String(service.pid)], { TOLLGATE_PORT: String(port) });
    process.kill(service.pid, "SIGKILL");
    await service.exited;
    const r = await waiting;
    expect({ code: r.code, stderr: r.stderr.trim() })
      .toEqual({ code: 1, stderr: `not ready: process ${service.pid} has ended; nothing answers on http://127.0.0.1:${port}/v2/readiness` });
  });

  test("0: --pid of a running service that answers ready", async () => {
    const env = await serve();
    expect((await ready(["--wait", "60s", "--pid", String(t.served!.pid)], env)).code).toBe(0);
  });

  test.each([["0"], ["x"], ["-1"], ["1.5"]])("2: --pid %s is not a process id", async (pid) => {
    t.data = tempDataDir();
    const r = await ready([`--pid=${pid}`], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--pid: '${pid}' is not a process id`);
  });

  test.each([["soon"], ["-5s"], ["1.5s"]])("2: --wait %s is not a duration", async (wait) => {
    t.data = tempDataDir();
    const r = await ready([`--wait=${wait}`], { TOLLGATE_PORT: String(freePort()) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--wait: '${wait}' is not a duration`);
  });

  test("2: an argument", async () => {
    t.data = tempDataDir();
    const r = await ready(["now"], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ready takes no arguments");
  });
});

describe("readinessUrl", () => {
  test.each([
    ["127.0.0.1", "http://127.0.0.1:8080/v2/readiness"],
    ["0.0.0.0", "http://127.0.0.1:8080/v2/readiness"],
    ["::", "http://[::1]:8080/v2/readiness"],
    ["::1", "http://[::1]:8080/v2/readiness"],
    ["192.0.2.7", "http://192.0.2.7:8080/v2/readiness"],
    ["localhost", "http://localhost:8080/v2/readiness"],
  ])("%s → %s", (host, url) => {
    expect(readinessUrl({ host, port: 8080 })).toBe(url);
  });
});
