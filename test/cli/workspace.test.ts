/** `tollgate workspace create|list|update` as a child process, over one data dir for this file. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCli, tableRows, tempDataDir } from "../support/cli.ts";

let data: ReturnType<typeof tempDataDir>;
beforeAll(() => { data = tempDataDir(); });
afterAll(() => data.cleanup());

const run = (...args: string[]) => runCli(["workspace", ...args], { dataDir: data.dir });

const WORKSPACE_HEADER = ["ID", "NAME", "ANALYTICS"];

/** `workspace list` as rows: [id, name, on|off]. */
async function listRows(): Promise<string[][]> {
  const r = await run("list");
  expect(r.code).toBe(0);
  return tableRows(r.stdout, WORKSPACE_HEADER);
}

let acmeId = "";

describe("workspace create", () => {
  test("prints only the new workspace id on stdout", async () => {
    const r = await run("create", "--name", "acme");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ws_[1-9A-HJ-NP-Za-km-z]+\n$/);
    acmeId = r.stdout.trim();
  });

  test("a name that exists (compared case-insensitively) exits 1 with a message", async () => {
    const r = await run("create", "--name", "ACME");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("already exists");
  });

  test("--analytics creates the workspace with analytics on", async () => {
    const r = await run("create", "--name", "beta", "--analytics");
    expect(r.code).toBe(0);
    expect((await listRows()).find((row) => row[1] === "beta")).toEqual([r.stdout.trim(), "beta", "on"]);
  });

  test("an invalid name exits non-zero with a message and creates nothing", async () => {
    const r = await run("create", "--name", "has spaces");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("workspace name");
    expect((await listRows()).map((row) => row[1])).not.toContain("has spaces");
  });

  test("--name is required (usage error)", async () => {
    const r = await run("create", "--analytics");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--name is required");
  });
});

describe("workspace list", () => {
  test("shows every workspace, one a line: id, name, analytics (default bootstrapped on first use)", async () => {
    const rows = await listRows();
    expect(rows.find((row) => row[1] === "acme")).toEqual([acmeId, "acme", "off"]);
    expect(rows.map((row) => row[1])).toEqual(["default", "acme", "beta"]);
  });

  test("--json: one array of {id, name, analyticsEnabled, createdAt}", async () => {
    const r = await run("list", "--json");
    expect(r.code).toBe(0);
    const list = JSON.parse(r.stdout) as Array<{ id: string; name: string; analyticsEnabled: boolean; createdAt: number }>;
    expect(list.map((w) => w.name)).toEqual(["default", "acme", "beta"]);
    expect(list[1]).toEqual({ id: acmeId, name: "acme", analyticsEnabled: false, createdAt: expect.any(Number) });
  });
});

describe("workspace update", () => {
  test("--analytics on by name, then off by id", async () => {
    const on = await run("update", "acme", "--analytics", "on");
    expect(on.code).toBe(0);
    expect(tableRows(on.stdout, WORKSPACE_HEADER)).toEqual([[acmeId, "acme", "on"]]);
    expect((await listRows()).find((row) => row[0] === acmeId)?.[2]).toBe("on");

    const off = await run("update", acmeId, "--analytics", "off");
    expect(off.code).toBe(0);
    expect((await listRows()).find((row) => row[0] === acmeId)?.[2]).toBe("off");
  });

  test.each([
    [["update", "acme", "--analytics", "yes"], "--analytics must be on or off"],
    [["update", "acme"], "--analytics is required"],
    [["update", "--analytics", "on"], "exactly one <id|name>"],
    [["update", "acme", "beta", "--analytics", "on"], "exactly one <id|name>"],
  ])("%p is a usage error (exit 2)", async (args, message) => {
    const r = await run(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  test("an unknown workspace exits 1 and names it", async () => {
    const r = await run("update", "nope", "--analytics", "on");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("'nope'");
  });
});
