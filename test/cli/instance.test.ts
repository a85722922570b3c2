/**
 * One `serve` per data dir and per port, with real child processes: a second serve on a data dir
 * in use exits 1 at once naming the dir and the holder's PID, and writes nothing; the lock goes
 * with a SIGKILLed holder; a second serve on a port in use exits 1 with "address in use" and never
 * takes a share of the first's connections; the CLI keeps working beside a running serve.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { lockDataDir } from "../../src/storage/instance-lock.ts";
import { runCli, startServe, tempDataDir, type Served } from "../support/cli.ts";

/** Each test starts several processes; a busy machine makes that slow. */
const CHILD_PROCESS_TEST_TIMEOUT_MS = 30_000;

const datas: Array<ReturnType<typeof tempDataDir>> = [];
const served: Served[] = [];
afterEach(() => {
  for (const s of served.splice(0)) s.kill();
  for (const d of datas.splice(0)) d.cleanup();
});

function freshDataDir(): string {
  const data = tempDataDir();
  datas.push(data);
  return data.dir;
}

async function serve(dataDir: string, env?: Record<string, string>): Promise<Served> {
  const s = await startServe({ dataDir, ...(env ? { env } : {}) });
  served.push(s);
  return s;
}

/** Every file of `dir` with its size, and the secrets' contents. */
function snapshot(dir: string): { files: string[]; masterKey: string; rootKeyFile: string } {
  return {
    files: readdirSync(dir).sort(),
    masterKey: readFileSync(join(dir, "master.key"), "utf8"),
    rootKeyFile: readFileSync(join(dir, "bootstrap-root-key"), "utf8"),
  };
}

const rootKeyOf = (dir: string) => readFileSync(join(dir, "bootstrap-root-key"), "utf8").trim();

describe("one serve per data dir", () => {
  test("exit 1: a second serve on a data dir in use names the dir and the first's PID, and changes nothing", async () => {
    const dir = freshDataDir();
    const first = await serve(dir);
    const before = snapshot(dir);
    const startedMs = performance.now();
    const second = await runCli(["serve"], { dataDir: dir });
    expect(performance.now() - startedMs).toBeLessThan(10_000);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`the data dir ${dir} is in use by another tollgate serve (PID ${first.pid})`);
    expect(second.stderr).not.toContain("listening");
    expect(second.stderr).not.toMatch(/^\s+at /m);
    expect(snapshot(dir)).toEqual(before);
    expect((await first.post("/v2/apis.createApi", { name: "first-still-serves" }, rootKeyOf(dir))).status).toBe(200);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);

  test("exit 1: a data dir held by another process gets nothing created in it (no database, no key, no bootstrap)", async () => {
    const dir = freshDataDir();
    mkdirSync(dir, { mode: 0o700 });
    const lock = lockDataDir(dir);
    try {
      const before = readdirSync(dir).map((name) => ({ name, ...sizeAndTime(join(dir, name)) }));
      const second = await runCli(["serve"], { dataDir: dir });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`${dir} is in use by another tollgate serve (PID ${process.pid})`);
      expect(readdirSync(dir).map((name) => ({ name, ...sizeAndTime(join(dir, name)) }))).toEqual(before);
      expect(before.map((f) => f.name)).toEqual(["serve.lock"]);
    } finally {
      lock.release();
    }
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);

  test("after the holder is killed with SIGKILL, a new serve starts on the data dir and has its data", async () => {
    const dir = freshDataDir();
    const first = await serve(dir);
    const api = await first.post("/v2/apis.createApi", { name: "before-the-kill" }, rootKeyOf(dir));
    expect(api.status).toBe(200);
    first.kill();
    expect(await first.exitCode()).not.toBe(0);
    const next = await serve(dir);
    expect((await next.post("/v2/apis.getApi", { apiId: api.body.data.apiId }, rootKeyOf(dir))).status).toBe(200);
    expect(await next.stop()).toBe(0);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);
});

function sizeAndTime(path: string): { size: number; mtimeMs: number } {
  const stat = statSync(path);
  return { size: stat.size, mtimeMs: stat.mtimeMs };
}

describe("one serve per port", () => {
  test("exit 1: a second serve on the first's port says 'address in use' and the address, having created nothing; every request still reaches the first", async () => {
    const dir = freshDataDir();
    const first = await serve(dir);
    const port = new URL(first.url).port;
    const secondDir = freshDataDir();
    const second = await runCli(["serve"], { dataDir: secondDir, env: { TOLLGATE_PORT: port } });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`error: cannot listen on 127.0.0.1:${port}: address in use`);
    expect(second.stderr).not.toMatch(/^\s+at /m);
    // Checked before the data dir, its databases and a bootstrap root key were made.
    expect(existsSync(secondDir)).toBe(false);
    // The second data dir's root key would be 401 here: each answer comes from the first.
    const key = rootKeyOf(dir);
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => first.post("/v2/apis.createApi", { name: `first-${i}` }, key).then((r) => r.status)));
    expect(statuses).toEqual(Array(40).fill(200));
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);
});

describe("the CLI beside a running serve", () => {
  test("workspace create and root-key create work while serve holds the data dir, and serve sees the new key", async () => {
    const dir = freshDataDir();
    const running = await serve(dir);
    const workspace = await runCli(["workspace", "create", "--name", "beside"], { dataDir: dir });
    expect(workspace.code).toBe(0);
    const created = await runCli(["root-key", "create", "--workspace", "beside", "--name", "ops", "--permission", "api.*.create_api"], { dataDir: dir });
    expect(created.code).toBe(0);
    expect((await running.post("/v2/apis.createApi", { name: "by-cli-key" }, created.stdout.trim())).status).toBe(200);
    expect((await runCli(["migrate"], { dataDir: dir })).code).toBe(0);
  }, CHILD_PROCESS_TEST_TIMEOUT_MS);
});
