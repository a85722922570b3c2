/**
 * `tollgate root-key create|list|revoke` as child processes while `tollgate serve` runs on the same
 * data dir: the running service sees each change on its next request.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tableRows, type Served } from "../support/cli.ts";
import { perFile } from "../support/cli-slots.ts";

const file = perFile();
const server = (): Served => file.server;
const run = (...args: string[]) => runCli(["root-key", ...args], { dataDir: file.dir });

const ROOT_KEY_HEADER = ["ID", "NAME", "START", "STATE", "PERMISSIONS"];

/** `root-key list --workspace <ws>` as rows: [id, name, start…, state, permissions]. */
async function listRows(workspace: string): Promise<string[][]> {
  const r = await run("list", "--workspace", workspace);
  expect(r.code).toBe(0);
  return tableRows(r.stdout, ROOT_KEY_HEADER);
}

let ciKey = "";

describe("root-key create (while serve runs)", () => {
  test("acceptance: prints only a key that can create an API (200) and gets 403 on keys.createKey", async () => {
    const r = await run("create", "--workspace", "default", "--name", "ci", "--permission", "api.*.create_api");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^tg_root_[1-9A-HJ-NP-Za-km-z]+\n$/);
    ciKey = r.stdout.trim();

    const api = await server().post("/v2/apis.createApi", { name: "from-ci" }, ciKey);
    expect(api.status).toBe(200);
    expect(api.body.data.apiId).toMatch(/^api_/);

    const key = await server().post("/v2/keys.createKey", { apiId: api.body.data.apiId }, ciKey);
    expect(key.status).toBe(403);
    expect(key.body.error.detail).toContain("create_key");
  });

  test("several --permission flags, `apis.` spelling and an API-scoped id are accepted", async () => {
    const r = await run("create", "--workspace", "default", "--name", "multi",
      "--permission", "apis.*.create_api", "--permission", "api.api_123.read_api", "--permission", "ratelimit.*.limit");
    expect(r.code).toBe(0);
    const row = (await listRows("default")).find((k) => k[1] === "multi");
    expect(row?.[4]?.split(",").sort()).toEqual(["api.api_123.read_api", "apis.*.create_api", "ratelimit.*.limit"]);
    expect((await server().post("/v2/apis.createApi", { name: "via-apis" }, r.stdout.trim())).status).toBe(200);
  });

  test("a key of another workspace works only there", async () => {
    const ws = await runCli(["workspace", "create", "--name", "acme"], { dataDir: file.dir });
    expect(ws.code).toBe(0);
    const r = await run("create", "--workspace", ws.stdout.trim(), "--name", "acme-ci", "--permission", "api.*.create_api", "--permission", "api.*.read_api");
    expect(r.code).toBe(0);
    const acmeKey = r.stdout.trim();
    const defaultApi = await server().post("/v2/apis.createApi", { name: "default-only" }, file.rootKey);
    expect(defaultApi.status).toBe(200);
    expect((await server().post("/v2/apis.getApi", { apiId: defaultApi.body.data.apiId }, acmeKey)).status).toBe(404);
    expect((await server().post("/v2/apis.createApi", { name: "acme-api" }, acmeKey)).status).toBe(200);
  });

  test.each([
    [["--permission", "bad"], "bad"],
    [["--permission", "api.*"], "api.*"],
    [["--permission", "api.*.create_apis"], "api.*.create_apis"],
    [["--permission", "api.*.create_api", "--permission", "api.*.Read_API"], "api.*.Read_API"],
  ])("a bad permission string %p exits 2 and names it", async (flags, named) => {
    const r = await run("create", "--workspace", "default", "--name", "bad", ...flags);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--permission");
    expect(r.stderr).toContain(named);
  });

  test("no key is created by a rejected command", async () => {
    expect((await listRows("default")).map((k) => k[1])).not.toContain("bad");
  });

  test.each([
    [[], "at least one --permission"],
    [["--permission", "api.*.create_api", "--name"], "--name"],
    [["--permission", "api.*.create_api", "--bogus"], "--bogus"],
  ])("missing or unknown flags %p are usage errors", async (flags, message) => {
    const args = flags.includes("--name") ? ["create", "--workspace", "default", ...flags] : ["create", "--workspace", "default", "--name", "x", ...flags];
    const r = await run(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  test("an unknown workspace exits 1 and names it", async () => {
    const r = await run("create", "--workspace", "nope", "--name", "x", "--permission", "api.*.create_api");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("'nope'");
  });
});

describe("--expires", () => {
  test.each([["soon"], ["1.5e12"], ["1700000000"], ["2027-02-30"], ["-3d"], ["2020-01-01"]])("%p (not a time, seconds, or in the past) exits 2", async (value) => {
    const r = await run("create", "--workspace", "default", "--name", "exp", "--permission", "api.*.create_api", "--expires", value);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--expires");
  });

  test.each([["30d", 30 * 86_400_000], ["12h", 12 * 3_600_000]])("a duration %p counts from now", async (value, durationMs) => {
    const before = Date.now();
    const r = await run("create", "--workspace", "default", "--name", `in-${value}`, "--permission", "api.*.create_api", "--expires", value);
    expect(r.code).toBe(0);
    const listed = JSON.parse((await run("list", "--workspace", "default", "--json")).stdout) as Array<{ name: string; expiresAt: number }>;
    const expiresAt = listed.find((k) => k.name === `in-${value}`)!.expiresAt;
    expect(expiresAt).toBeGreaterThanOrEqual(before + durationMs);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + durationMs);
  });

  test("an ISO date is that day, 00:00 UTC", async () => {
    const r = await run("create", "--workspace", "default", "--name", "iso", "--permission", "api.*.create_api", "--expires", "2099-12-31");
    expect(r.code).toBe(0);
    const listed = JSON.parse((await run("list", "--workspace", "default", "--json")).stdout) as Array<{ name: string; expiresAt: number }>;
    expect(listed.find((k) => k.name === "iso")!.expiresAt).toBe(Date.UTC(2099, 11, 31));
  });

  test("a future Unix ms creates an active key that works until then", async () => {
    const expiresAt = Date.now() + 3_600_000;
    const r = await run("create", "--workspace", "default", "--name", "expiring", "--permission", "api.*.create_api", "--expires", String(expiresAt));
    expect(r.code).toBe(0);
    expect((await listRows("default")).find((k) => k[1] === "expiring")?.[3]).toBe("active");
    expect((await server().post("/v2/apis.createApi", { name: "before-expiry" }, r.stdout.trim())).status).toBe(200);
  });
});

describe("root-key list", () => {
  test("shows the key's id, name, start, state and permissions, never its value", async () => {
    const r = await run("list", "--workspace", "default");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(ciKey);
    expect(r.stdout).not.toContain(file.rootKey);
    const rows = tableRows(r.stdout, ROOT_KEY_HEADER);
    const ci = rows.find((k) => k[1] === "ci");
    expect(ci).toEqual([expect.stringMatching(/^rk_/), "ci", `${ciKey.slice(0, 12)}…`, "active", "api.*.create_api"]);
    expect(rows.find((k) => k[1] === "bootstrap")?.[3]).toBe("active");
  });

  test("--json: one array of the keys (no key value), with their state", async () => {
    const r = await run("list", "--workspace", "default", "--json");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(ciKey);
    const ci = (JSON.parse(r.stdout) as Array<Record<string, unknown>>).find((k) => k.name === "ci");
    expect(ci).toEqual({
      id: expect.stringMatching(/^rk_/), name: "ci", start: ciKey.slice(0, 12), permissions: ["api.*.create_api"],
      createdAt: expect.any(Number), expiresAt: null, revokedAt: null, state: "active",
    });
  });

  test("--workspace is required; an unknown workspace exits 1", async () => {
    expect((await run("list")).code).toBe(2);
    expect((await run("list", "--workspace", "nope")).code).toBe(1);
  });
});

describe("root-key revoke (while serve runs)", () => {
  test("the next request with the revoked key is 401; list shows it revoked; the bootstrap key still works", async () => {
    const id = (await listRows("default")).find((k) => k[1] === "ci")?.[0];
    expect(id).toBeDefined();
    expect((await server().post("/v2/apis.createApi", { name: "before-revoke" }, ciKey)).status).toBe(200);

    const r = await run("revoke", id!);
    expect(r.code).toBe(0);

    const after = await server().post("/v2/apis.createApi", { name: "after-revoke" }, ciKey);
    expect(after.status).toBe(401);
    expect((await listRows("default")).find((k) => k[0] === id)?.[3]).toBe("revoked");
    expect((await server().post("/v2/apis.createApi", { name: "bootstrap-still-ok" }, file.rootKey)).status).toBe(200);

    const again = await run("revoke", id!);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(id!);
  });

  test("an unknown id exits 1 and names it", async () => {
    const r = await run("revoke", "rk_doesnotexist");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("rk_doesnotexist");
  });

  test("revoke takes exactly one id (usage error)", async () => {
    expect((await run("revoke")).code).toBe(2);
    expect((await run("revoke", "rk_a", "rk_b")).code).toBe(2);
  });
});

describe("root-key values never reach the service's log", () => {
  test("no key printed by the CLI appears in serve's stdout or stderr", () => {
    const output = server().stdout() + server().stderr();
    expect(ciKey).not.toBe("");
    expect(output).not.toContain(ciKey);
    expect(output).not.toContain(file.rootKey);
  });
});
