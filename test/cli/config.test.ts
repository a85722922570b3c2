/** `tollgate config check|print`, with the CLI as a child process, and the settings it prints. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { CONFIG_VARIABLES, effectiveSettings } from "../../src/config.ts";
import { runCli, tempDataDir } from "../support/cli.ts";

let data: ReturnType<typeof tempDataDir>;
beforeAll(() => { data = tempDataDir(); });
afterAll(() => data.cleanup());

const run = (args: string[], env?: Record<string, string>) => runCli(args, { dataDir: data.dir, ...(env ? { env } : {}) });
const ROOT_KEY = "tg_root_secret_value_1234";
const MASTER_KEY = Buffer.alloc(32, 7).toString("base64");

describe("config check", () => {
  test("0 and ok for a good environment, without touching the data dir", async () => {
    expect(await run(["config", "check"])).toMatchObject({ code: 0, stdout: "ok\n" });
    expect(existsSync(data.dir)).toBe(false);
  });

  test("78 naming each bad variable", async () => {
    const r = await run(["config", "check"], { TOLLGATE_PORT: "eighty", TOLLGATE_LOG_LEVEL: "loud" });
    expect(r.code).toBe(78);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`TOLLGATE_PORT must be a whole number from 0 to 65535, got "eighty"`);
    expect(r.stderr).toContain(`TOLLGATE_LOG_LEVEL must be one of debug, info, warn, error, got "loud"`);
  });
});

describe("config print", () => {
  test("every variable a line, NAME=value, defaults included and secrets masked", async () => {
    const r = await run(["config", "print"], { TOLLGATE_ROOT_KEY: ROOT_KEY, TOLLGATE_MASTER_KEY: MASTER_KEY, TOLLGATE_KEY_CACHE_MB: "64", TOLLGATE_DOCS_URL: "https://docs.example.com/" });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.map((l) => l.slice(0, l.indexOf("=")))).toEqual(CONFIG_VARIABLES.map(([name]) => name));
    expect(lines).toContain(`TOLLGATE_DATA_DIR=${data.dir}`);
    expect(lines).toContain("TOLLGATE_PORT=0");
    expect(lines).toContain("TOLLGATE_KEY_CACHE_MB=64");
    expect(lines).toContain("TOLLGATE_HOST=127.0.0.1");
    expect(lines).toContain("TOLLGATE_DOCS_URL=https://docs.example.com");
    expect(lines).toContain("TOLLGATE_ROOT_KEY=********");
    expect(lines).toContain("TOLLGATE_MASTER_KEY=********");
    expect(r.stdout).not.toContain(ROOT_KEY);
    expect(r.stdout).not.toContain(MASTER_KEY);
  });

  test("--json: one object of the same settings, unset ones null", async () => {
    const r = await run(["config", "print", "--json"], { TOLLGATE_ROOT_KEY: ROOT_KEY });
    expect(r.code).toBe(0);
    const settings = JSON.parse(r.stdout);
    expect(Object.keys(settings)).toEqual(CONFIG_VARIABLES.map(([name]) => name));
    expect(settings).toMatchObject({ TOLLGATE_PORT: "0", TOLLGATE_ROOT_KEY: "********", TOLLGATE_MASTER_KEY: null, TOLLGATE_ANALYTICS: "on" });
  });

  test("78 on a bad value, as check", async () => {
    const r = await run(["config", "print"], { TOLLGATE_KEY_CACHE_MB: "0" });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("TOLLGATE_KEY_CACHE_MB must be from 1 to 1048576, got 0");
  });

  test("every variable has its effective value: only those without a default are unset in an empty environment", () => {
    const unset = effectiveSettings({}).filter(([, value]) => value === undefined).map(([name]) => name);
    expect(unset).toEqual(["TOLLGATE_ROOT_KEY", "TOLLGATE_MASTER_KEY", "TOLLGATE_DOCS_URL", "TOLLGATE_DATABASE_URL", "TOLLGATE_REDIS_URL"]);
  });

  test("2 for an unknown subcommand or a stray argument", async () => {
    for (const args of [["config"], ["config", "show"], ["config", "print", "extra"], ["config", "check", "--json"]]) {
      expect({ args, code: (await run(args)).code }).toEqual({ args, code: 2 });
    }
  });
});
