/**
 * `tollgate key create|list|get|disable|enable|delete|credits` as child processes over one data dir
 * (no server: test/cli/key-serve.test.ts runs them beside `serve`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCli, tableRows, tempDataDir } from "../support/cli.ts";

let data: ReturnType<typeof tempDataDir>;
let apiId = "";

beforeAll(async () => {
  data = tempDataDir();
  apiId = (await runCli(["api", "create", "shop"], { dataDir: data.dir })).stdout.trim();
});
afterAll(() => data.cleanup());

const run = (...args: string[]) => runCli(["key", ...args], { dataDir: data.dir });
const DAY_MS = 86_400_000;
const KEY_HEADER = ["ID", "NAME", "START", "STATE", "CREDITS", "OWNER", "EXPIRES"];

/** `key list --api shop [flags]` as rows: [id, name, start, state, credits, external id, expires]. */
async function listRows(...flags: string[]): Promise<string[][]> {
  const r = await run("list", "--api", "shop", ...flags);
  expect(r.code).toBe(0);
  return tableRows(r.stdout, KEY_HEADER);
}

let aliceId = "";
let aliceKey = "";

describe("key create", () => {
  test("prints only the key on stdout and its id on stderr; every flag reaches the key", async () => {
    const before = Date.now();
    const r = await run("create", "--api", "shop", "--name", "alice", "--prefix", "sk", "--credits", "5", "--expires", "30d",
      "--permission", "docs.read", "--permission", "docs.write", "--external-id", "user_1", "--meta", '{"plan":"pro"}', "--recoverable");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sk_[1-9A-HJ-NP-Za-km-z]+\n$/);
    aliceKey = r.stdout.trim();
    aliceId = r.stderr.trim().split("\n").at(-1)!;
    expect(aliceId).toMatch(/^key_/);
    const got = await run("get", aliceId, "--json");
    expect(got.code).toBe(0);
    const view = JSON.parse(got.stdout);
    expect(view).toMatchObject({
      keyId: aliceId, name: "alice", start: aliceKey.slice(0, 7), enabled: true, meta: { plan: "pro" },
      permissions: ["docs.read", "docs.write"], credits: { remaining: 5 }, identity: { externalId: "user_1" },
    });
    expect(view.expires).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(view.expires).toBeLessThan(Date.now() + 30 * DAY_MS + 1);
  });

  test("--api by id, --expires as an ISO date; a role must exist (exit 1 naming it)", async () => {
    const r = await run("create", "--api", apiId, "--name", "bob", "--expires", "2099-01-31");
    expect(r.code).toBe(0);
    const row = (await listRows()).find((k) => k[1] === "bob");
    expect(row?.[6]).toBe("2099-01-31T00:00:00.000Z");
    const role = await run("create", "--api", "shop", "--role", "admin");
    expect(role.code).toBe(1);
    expect(role.stdout).toBe("");
    expect(role.stderr).toContain("admin");
  });

  test.each([
    [["--expires", "soon"], "--expires"],
    [["--expires", "2027-02-30"], "--expires"],
    [["--expires", "1700000000"], "--expires"],
    [["--expires", "2100-01-02"], "--expires"],
    [["--credits", "-1"], "--credits"],
    [["--credits", "lots"], "--credits"],
    [["--prefix", "has-dash"], "--prefix"],
    [["--external-id", "a b"], "--external-id"],
    [["--permission", "bad perm"], "--permission"],
    [["--meta", "[1]"], "--meta"],
    [["--meta", "{"], "--meta"],
    [["--bogus"], "--bogus"],
  ])("%p is a usage error (exit 2) naming the flag, and creates nothing", async (flags, named) => {
    const r = await run("create", "--api", "shop", "--name", "rejected", ...flags);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(named);
  });

  test("--api is required (exit 2); an unknown API exits 1 and names it", async () => {
    expect((await run("create", "--name", "x")).code).toBe(2);
    const r = await run("create", "--api", "nope");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("'nope'");
    expect((await listRows()).map((k) => k[1])).not.toContain("rejected");
  });
});

describe("key create past the workspace's key quota", () => {
  test("exits 1 with the service's reason, naming the variable; no key is made", async () => {
    const before = await listRows();
    const r = await runCli(["key", "create", "--api", "shop"], { dataDir: data.dir, env: { TOLLGATE_WORKSPACE_MAX_KEYS: String(before.length) } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("TOLLGATE_WORKSPACE_MAX_KEYS");
    expect(await listRows()).toEqual(before);
  });
});

describe("key list and get", () => {
  test("one key a line: id, name, start, state, credits, external id, expires; '-' for none", async () => {
    const rows = await listRows();
    const alice = rows.find((k) => k[0] === aliceId);
    expect(alice?.slice(0, 6)).toEqual([aliceId, "alice", aliceKey.slice(0, 7), "enabled", "5", "user_1"]);
    expect(rows.find((k) => k[1] === "bob")?.slice(3, 6)).toEqual(["enabled", "unlimited", "-"]);
    expect((await run("get", aliceId)).stdout).toBe(`${KEY_HEADER.join("\t")}\n${alice!.join("\t")}\n`);
  });

  test("--search matches the name, the external id or the start, case-insensitively", async () => {
    expect((await listRows("--search", "ALI")).map((k) => k[1])).toEqual(["alice"]);
    expect((await listRows("--search", "user_1")).map((k) => k[1])).toEqual(["alice"]);
    expect((await listRows("--search", aliceKey.slice(0, 6))).map((k) => k[1])).toEqual(["alice"]);
    expect(await listRows("--search", "nobody")).toEqual([]);
  });

  test("--limit caps the lines; --json is an array of the v2 API's key objects", async () => {
    expect(await listRows("--limit", "1")).toHaveLength(1);
    const r = await run("list", "--api", "shop", "--json");
    const keys = JSON.parse(r.stdout) as Array<{ keyId: string; name?: string }>;
    expect(keys.map((k) => k.name).sort()).toEqual(["alice", "bob"]);
    expect(Object.keys(keys.find((k) => k.keyId === aliceId)!)).toEqual(expect.arrayContaining(["keyId", "start", "enabled", "createdAt"]));
    expect((await run("list", "--api", "shop", "--limit", "0")).code).toBe(2);
    expect((await run("list")).code).toBe(2);
  });

  test("get: an unknown key exits 1 naming it; exactly one id", async () => {
    const r = await run("get", "key_nope");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("key_nope");
    expect((await run("get")).code).toBe(2);
    expect((await run("get", "a", "b")).code).toBe(2);
  });
});

describe("key credits", () => {
  test("add, remove and set print the credits left; set takes 'unlimited'; --json is the v2 credits object", async () => {
    expect((await run("credits", aliceId, "add", "3")).stdout).toBe("8\n");
    expect((await run("credits", aliceId, "remove", "10")).stdout).toBe("0\n");
    expect(JSON.parse((await run("credits", aliceId, "set", "7", "--json")).stdout)).toEqual({ remaining: 7 });
    expect((await run("credits", aliceId, "set", "unlimited")).stdout).toBe("unlimited\n");
    expect((await listRows()).find((k) => k[0] === aliceId)?.[4]).toBe("unlimited");
  });

  test("add to an unlimited key exits 1 with the service's reason", async () => {
    const r = await run("credits", aliceId, "add", "1");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("unlimited");
  });

  test.each([
    [["set"]], [["grant", "1"]], [["add", "unlimited"]], [["add", "-2"]], [["set", "1", "2"]],
  ])("%p is a usage error", async (args) => {
    expect((await run("credits", aliceId, ...args)).code).toBe(2);
  });

  test("an unknown key exits 1 naming it", async () => {
    const r = await run("credits", "key_nope", "set", "1");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("key_nope");
  });
});

describe("key disable, enable, delete", () => {
  test("disable and enable show in the key's state; delete removes it from list and get", async () => {
    expect((await run("disable", aliceId)).code).toBe(0);
    expect((await listRows()).find((k) => k[0] === aliceId)?.[3]).toBe("disabled");
    expect((await run("enable", aliceId)).code).toBe(0);
    expect((await listRows()).find((k) => k[0] === aliceId)?.[3]).toBe("enabled");
    const del = await run("delete", aliceId);
    expect(del.code).toBe(0);
    expect(del.stdout).toBe("");
    expect((await listRows()).map((k) => k[0])).not.toContain(aliceId);
    expect((await run("get", aliceId)).code).toBe(1);
  });

  test.each([["disable"], ["enable"], ["delete"]])("%s: an unknown key exits 1 naming it; exactly one id", async (sub) => {
    const r = await run(sub, "key_nope");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("key_nope");
    expect((await run(sub)).code).toBe(2);
  });
});

test("key without a known subcommand is a usage error", async () => {
  expect((await run()).code).toBe(2);
  expect((await run("rotate")).code).toBe(2);
});
