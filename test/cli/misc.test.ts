/** The CLI as a child process: version, help, usage errors (2), configuration errors (78), the text log format, migrate, backup. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import pkg from "../../package.json";
import { runCli, tempDataDir } from "../support/cli.ts";
import { parseTextLine } from "../support/text-log.ts";

let data: ReturnType<typeof tempDataDir>;
beforeAll(() => { data = tempDataDir(); });
afterAll(() => data.cleanup());

const run = (args: string[], env?: Record<string, string>) => runCli(args, { dataDir: data.dir, ...(env ? { env } : {}) });

describe("version and help (exit 0)", () => {
  test("version prints the package version alone", async () => {
    const r = await run(["version"]);
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });

  test("help lists the commands, the variables and the exit codes", async () => {
    const r = await run(["help"]);
    expect(r.code).toBe(0);
    for (const word of ["serve", "migrate", "workspace create", "root-key create", "backup", "version", "TOLLGATE_PORT", "TOLLGATE_DATA_DIR", "78"]) {
      expect(r.stdout).toContain(word);
    }
  });

  test("<command> --help prints that command's help", async () => {
    const r = await run(["root-key", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("root-key create --workspace");
    expect(r.stdout).not.toContain("workspace update");
  });

  test("version and help neither read the configuration nor touch the data dir", async () => {
    const r = await run(["version"], { TOLLGATE_PORT: "not-a-port" });
    expect(r.code).toBe(0);
    expect(existsSync(data.dir)).toBe(false);
  });
});

describe("usage errors (exit 2)", () => {
  test("an unknown command", async () => {
    const r = await run(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });

  test("--help of an unknown command", async () => {
    expect((await run(["frobnicate", "--help"])).code).toBe(2);
  });

  test.each([
    [["workspace", "list", "--bogus"], "--bogus"],
    [["workspace", "create", "--name"], "--name"],
    [["workspace", "frobnicate"], "unknown workspace command"],
    [["root-key", "create", "--workspace", "default", "--name", "x"], "at least one --permission"],
    [["serve", "--port", "1"], "serve takes no arguments"],
    [["migrate", "--force"], "migrate takes no arguments"],
    [["backup"], "exactly one <file>"],
  ])("tollgate %p creates nothing", async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
    expect(existsSync(data.dir)).toBe(false);
  });
});

describe("configuration errors (exit 78)", () => {
  test("a bad TOLLGATE_PORT is named on stderr and nothing is created", async () => {
    const r = await run(["migrate"], { TOLLGATE_PORT: "80x" });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("TOLLGATE_PORT");
    expect(r.stdout).toBe("");
    expect(existsSync(data.dir)).toBe(false);
  });

  test("a bad TOLLGATE_MASTER_KEY is named on stderr without echoing it, together with other problems", async () => {
    const badKey = Buffer.alloc(16, 3).toString("base64");
    const r = await run(["workspace", "list"], { TOLLGATE_MASTER_KEY: badKey, TOLLGATE_LOG_LEVEL: "chatty" });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("TOLLGATE_MASTER_KEY");
    expect(r.stderr).toContain("TOLLGATE_LOG_LEVEL");
    expect(r.stderr).not.toContain(badKey);
  });

  test("TOLLGATE_DATABASE_URL without TOLLGATE_REDIS_URL stops serve before it touches anything", async () => {
    const r = await run(["serve"], { TOLLGATE_DATABASE_URL: "postgres://tollgate:hunter2@127.0.0.1:1/tg" });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("TOLLGATE_REDIS_URL");
    expect(r.stderr).not.toContain("hunter2");
    expect(existsSync(data.dir)).toBe(false);
  });

  test("a bad TOLLGATE_LOG_FORMAT is named on stderr", async () => {
    const r = await run(["migrate"], { TOLLGATE_LOG_FORMAT: "logfmt" });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("TOLLGATE_LOG_FORMAT");
    expect(existsSync(data.dir)).toBe(false);
  });
});

describe("TOLLGATE_LOG_FORMAT=text", () => {
  test("log lines are '<time> <LEVEL> <message> key=value …' and parse back to their fields", async () => {
    const own = tempDataDir();
    try {
      const r = await runCli(["migrate"], { dataDir: own.dir, env: { TOLLGATE_LOG_FORMAT: "text" } });
      expect(r.code).toBe(0);
      const line = r.stderr.split("\n").find((l) => l.includes("applied migrations"))!;
      expect(line).toMatch(/^\d{4}-\d\d-\d\dT\S+Z INFO applied migrations migrations=\[/);
      expect(parseTextLine(line)).toMatchObject({ level: "info", msg: "applied migrations", migrations: expect.arrayContaining([expect.any(String)]) });
    } finally {
      own.cleanup();
    }
  });
});

describe("migrate", () => {
  test("creates tollgate.db in an empty (missing) data dir, with every migration, and exits 0", async () => {
    const r = await run(["migrate"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("applied migrations");
    expect(existsSync(join(data.dir, "tollgate.db"))).toBe(true);
    const db = new Database(join(data.dir, "tollgate.db"), { readonly: true });
    try {
      expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()?.n).toBeGreaterThan(0);
      expect(db.query("SELECT name FROM sqlite_master WHERE name = 'workspaces'").get()).not.toBeNull();
    } finally {
      db.close();
    }
  });

  test("is idempotent: a second run applies nothing and exits 0", async () => {
    const r = await run(["migrate"]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("applied migrations");
  });

  test("migrate alone does not bootstrap: no workspace, no bootstrap key", () => {
    expect(readdirSync(data.dir)).not.toContain("bootstrap-root-key");
    const db = new Database(join(data.dir, "tollgate.db"), { readonly: true });
    try {
      expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM workspaces").get()?.n).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe("backup", () => {
  test("writes a consistent copy and prints its path; an existing file is a usage error", async () => {
    const file = join(data.parent, "copy.db");
    const r = await run(["backup", file]);
    expect(r).toMatchObject({ code: 0, stdout: `${file}\n` });
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.query("SELECT name FROM sqlite_master WHERE name = 'workspaces'").get()).not.toBeNull();
    } finally {
      copy.close();
    }
    const again = await run(["backup", file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already exists");
  });
});
