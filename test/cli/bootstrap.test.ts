/**
 * First start on an empty data dir, with `tollgate serve` as a child process: workspace `default`,
 * the bootstrap root key (file 0600 or TOLLGATE_ROOT_KEY), master.key 0600, never logged; SIGTERM
 * stops it with exit 0. Each test has its own data dir.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { runCli, startServe, tableRows, tempDataDir } from "../support/cli.ts";
import { perTest } from "../support/cli-slots.ts";

const t = perTest();

function freshDataDir(): string {
  t.data = tempDataDir();
  return t.data.dir;
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe("first serve on an empty data dir", () => {
  test("writes bootstrap-root-key (0600) whose value works, master.key (0600), never logs the key, and stops on SIGTERM with 0", async () => {
    const dir = freshDataDir();
    t.served = await startServe({ dataDir: dir });
    expect(t.served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.served.url).not.toMatch(/:0$/);

    const keyFile = join(dir, "bootstrap-root-key");
    expect(modeOf(keyFile)).toBe(0o600);
    const key = readFileSync(keyFile, "utf8").trim();
    expect(key).toMatch(/^tg_root_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(modeOf(join(dir, "master.key"))).toBe(0o600);
    expect(Buffer.from(readFileSync(join(dir, "master.key"), "utf8").trim(), "base64")).toHaveLength(32);
    expect(existsSync(join(dir, "tollgate.db"))).toBe(true);

    const api = await t.served.post("/v2/apis.createApi", { name: "first" }, key);
    expect(api.status).toBe(200);

    expect(await t.served.stop()).toBe(0);
    const output = t.served.stdout() + t.served.stderr();
    expect(output).not.toContain(key);
    expect(t.served.stdout()).toBe("");
    expect(t.served.stderr()).toContain("created workspace 'default'");
    expect(t.served.stderr()).toContain("stopped");

    // A second start bootstraps nothing: the same one root key, the same file.
    const list = await runCli(["root-key", "list", "--workspace", "default"], { dataDir: dir });
    expect(list.code).toBe(0);
    expect(tableRows(list.stdout, ["ID", "NAME", "START", "STATE", "PERMISSIONS"]).map((row) => row[1])).toEqual(["bootstrap"]);
    expect(list.stdout).not.toContain(key);
    expect(readFileSync(keyFile, "utf8").trim()).toBe(key);
  });

  test("with TOLLGATE_ROOT_KEY set, no key file is written, that value works and is never logged", async () => {
    const dir = freshDataDir();
    const rootKey = `tg_operator_${crypto.randomUUID().replaceAll("-", "")}`;
    t.served = await startServe({ dataDir: dir, env: { TOLLGATE_ROOT_KEY: rootKey } });

    expect(existsSync(join(dir, "bootstrap-root-key"))).toBe(false);
    expect((await t.served.post("/v2/apis.createApi", { name: "with-env-key" }, rootKey)).status).toBe(200);
    expect((await t.served.post("/v2/apis.createApi", { name: "wrong-key" }, `${rootKey}x`)).status).toBe(401);

    expect(await t.served.stop()).toBe(0);
    expect(t.served.stdout() + t.served.stderr()).not.toContain(rootKey);
  });

  test("with TOLLGATE_MASTER_KEY set, no master.key is written", async () => {
    const dir = freshDataDir();
    t.served = await startServe({ dataDir: dir, env: { TOLLGATE_MASTER_KEY: Buffer.alloc(32, 5).toString("base64") } });
    expect(existsSync(join(dir, "master.key"))).toBe(false);
    expect(await t.served.stop()).toBe(0);
  });
});

describe("a CLI command first on an empty data dir bootstraps like serve would", () => {
  test("workspace create first still gives workspace default and a bootstrap key; root-key create --workspace default works", async () => {
    const dir = freshDataDir();
    const ws = await runCli(["workspace", "create", "--name", "acme"], { dataDir: dir });
    expect(ws.code).toBe(0);
    expect(ws.stdout).toMatch(/^ws_\w+\n$/);

    const keyFile = join(dir, "bootstrap-root-key");
    expect(modeOf(keyFile)).toBe(0o600);
    const bootstrapKey = readFileSync(keyFile, "utf8").trim();
    expect(ws.stderr).not.toContain(bootstrapKey);

    const ci = await runCli(["root-key", "create", "--workspace", "default", "--name", "ci", "--permission", "api.*.create_api"], { dataDir: dir });
    expect(ci.code).toBe(0);

    // The first serve afterwards creates nothing more, and both keys work.
    t.served = await startServe({ dataDir: dir });
    expect(t.served.stderr()).not.toContain("created workspace 'default'");
    expect((await t.served.post("/v2/apis.createApi", { name: "bootstrap" }, bootstrapKey)).status).toBe(200);
    expect((await t.served.post("/v2/apis.createApi", { name: "from-ci" }, ci.stdout.trim())).status).toBe(200);
    expect(await t.served.stop()).toBe(0);
  });
});
