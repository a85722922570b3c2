/**
 * `tollgate api list|create|delete` as child processes while `tollgate serve` runs on the same data
 * dir: the server sees each change at once, and the audit log names the CLI as the actor.
 */
import { describe, expect, test } from "bun:test";
import { auditEntriesNaming, runCli, type Served } from "../support/cli.ts";
import { perFile } from "../support/cli-slots.ts";

const file = perFile();
const server = (): Served => file.server;
const run = (...args: string[]) => runCli(["api", ...args], { dataDir: file.dir });
const CLI_ACTOR = { type: "cli", id: "cli", name: "tollgate CLI" };

let shopId = "";

describe("api create", () => {
  test("prints only the new API id; the server finds it; the audit entry names the CLI", async () => {
    const r = await run("create", "shop");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^api_[1-9A-HJ-NP-Za-km-z]+\n$/);
    shopId = r.stdout.trim();
    const got = await server().post("/v2/apis.getApi", { apiId: shopId }, file.rootKey);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({ id: shopId, name: "shop" });
    const entries = await auditEntriesNaming(server(), file.rootKey, shopId);
    expect(entries).toEqual([expect.objectContaining({ event: "api.create", actor: CLI_ACTOR })]);
  });

  test("in another workspace with --workspace: the default workspace's root key does not see it", async () => {
    const ws = await runCli(["workspace", "create", "--name", "acme"], { dataDir: file.dir });
    expect(ws.code).toBe(0);
    const r = await run("create", "acme-api", "--workspace", "acme");
    expect(r.code).toBe(0);
    expect((await server().post("/v2/apis.getApi", { apiId: r.stdout.trim() }, file.rootKey)).status).toBe(404);
    expect((await run("list", "--workspace", ws.stdout.trim())).stdout).toBe(`ID\tNAME\n${r.stdout.trim()}\tacme-api\n`);
  });

  test.each([
    [[], "exactly one <name>"],
    [["a", "b"], "exactly one <name>"],
    [["xyz", "--bogus"], "--bogus"],
    [["ab"], "3 to 256 characters"],
  ])("%p is a usage error (exit 2) that creates nothing", async (args, message) => {
    const r = await run("create", ...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  test("an unknown --workspace exits 1 and names it", async () => {
    const r = await run("create", "xyz", "--workspace", "nope");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("'nope'");
  });
});

describe("api list", () => {
  test("a header, then one API a line: id, name, by id (the default workspace without --workspace)", async () => {
    const api = await server().post("/v2/apis.createApi", { name: "from-http" }, file.rootKey);
    const r = await run("list");
    expect(r.code).toBe(0);
    const lines = [`${shopId}\tshop`, `${api.body.data.apiId}\tfrom-http`].toSorted();
    expect(r.stdout).toBe(`ID\tNAME\n${lines.join("\n")}\n`);
  });

  test("--json: an array of {id, name, keySpaceId}, as apis.listApis answers, by id", async () => {
    const r = await run("list", "--json");
    expect(r.code).toBe(0);
    const list = JSON.parse(r.stdout) as Array<{ id: string; name: string; keySpaceId: string }>;
    expect(list.map((a) => a.id)).toEqual(list.map((a) => a.id).toSorted());
    expect(list.find((a) => a.id === shopId)).toMatchObject({ id: shopId, name: "shop", keySpaceId: expect.stringMatching(/^ks_/) });
    expect(list.map((a) => a.name).toSorted()).toEqual(["from-http", "shop"]);
  });

  test("takes no arguments", async () => {
    expect((await run("list", "extra")).code).toBe(2);
  });
});

describe("api delete", () => {
  test("by name: the server no longer finds it; the audit entry names the CLI", async () => {
    const r = await run("delete", "shop");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect((await server().post("/v2/apis.getApi", { apiId: shopId }, file.rootKey)).status).toBe(404);
    expect((await run("list")).stdout).not.toContain("shop");
    const entries = await auditEntriesNaming(server(), file.rootKey, shopId);
    expect(entries.map((e) => [e.event, e.actor])).toEqual([["api.delete", CLI_ACTOR], ["api.create", CLI_ACTOR]]);
  });

  test("by id; again: exit 1 naming it", async () => {
    const id = (await run("create", "short-lived")).stdout.trim();
    expect((await run("delete", id)).code).toBe(0);
    const again = await run("delete", id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(id);
  });

  test("a name two APIs share exits 1 and asks for the id", async () => {
    const a = (await run("create", "twin")).stdout.trim();
    const b = (await run("create", "twin")).stdout.trim();
    const r = await run("delete", "twin");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain([a, b].toSorted().join(", "));
  });

  test("exactly one <id|name> (usage error)", async () => {
    expect((await run("delete")).code).toBe(2);
    expect((await run("delete", "a", "b")).code).toBe(2);
  });
});

test("api without a known subcommand is a usage error", async () => {
  expect((await run()).code).toBe(2);
  expect((await run("rename")).code).toBe(2);
});
