/**
 * `tollgate stats`: the verifications a server recorded, by outcome and by API, read from the
 * analytics totals once the server has written them (on stop).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapKeyOf, runCli, startServe, tempDataDir } from "../support/cli.ts";

let data: ReturnType<typeof tempDataDir>;
let shopId = "";
let docsId = "";

beforeAll(async () => {
  data = tempDataDir();
  const served = await startServe({ dataDir: data.dir });
  try {
    const rootKey = bootstrapKeyOf(data.dir);
    const cli = async (...args: string[]) => (await runCli(args, { dataDir: data.dir })).stdout.trim();
    shopId = await cli("api", "create", "shop");
    docsId = await cli("api", "create", "docs");
    const shopKey = await cli("key", "create", "--api", "shop", "--credits", "1");
    const docsKey = await cli("key", "create", "--api", "docs");
    // shop: VALID, then USAGE_EXCEEDED twice; docs: VALID three times.
    for (const key of [shopKey, shopKey, shopKey, docsKey, docsKey, docsKey]) {
      expect((await served.post("/v2/keys.verifyKey", { key }, rootKey)).status).toBe(200);
    }
    // The server writes its buffered events when it stops.
    expect(await served.stop()).toBe(0);
  } finally {
    served.kill();
  }
});
afterAll(() => data.cleanup());

const stats = (...args: string[]) => runCli(["stats", ...args], { dataDir: data.dir });

describe("stats", () => {
  test("one count a line: the total, by outcome, then by API and outcome (default: the last 7 days, workspace 'default')", async () => {
    const r = await stats();
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("total\t6");
    expect(lines.filter((l) => l.startsWith("outcome\t")).sort()).toEqual(["outcome\tUSAGE_EXCEEDED\t2", "outcome\tVALID\t4"]);
    expect(lines.filter((l) => l.startsWith("api\t")).sort()).toEqual([
      `api\t${docsId}\tdocs\tVALID\t3`, `api\t${shopId}\tshop\tUSAGE_EXCEEDED\t2`, `api\t${shopId}\tshop\tVALID\t1`,
    ].sort());
  });

  test("--json: one object with the totals by outcome and by API", async () => {
    const r = await stats("--json", "--since", "1h");
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ total: 6, outcomes: { VALID: 4, USAGE_EXCEEDED: 2 } });
    expect(summary.apis).toEqual(expect.arrayContaining([
      { apiId: shopId, name: "shop", total: 3, outcomes: { VALID: 1, USAGE_EXCEEDED: 2 } },
      { apiId: docsId, name: "docs", total: 3, outcomes: { VALID: 3 } },
    ]));
  });

  test("--api by name counts that API only; --since after the verifications counts none", async () => {
    const shop = JSON.parse((await stats("--api", "shop", "--json")).stdout);
    expect(shop).toMatchObject({ total: 3, apis: [{ apiId: shopId }] });
    const later = await stats("--since", String(Date.now()), "--json");
    expect(JSON.parse(later.stdout)).toMatchObject({ total: 0, outcomes: {}, apis: [] });
  });

  test("another workspace has its own counts", async () => {
    expect((await runCli(["workspace", "create", "--name", "quiet"], { dataDir: data.dir })).code).toBe(0);
    expect((await stats("--workspace", "quiet")).stdout.split("\n")[0]).toBe("total\t0");
  });

  test("then the workspace's use of each quota, one a line, and as 'quotas' in --json", async () => {
    const lines = (await stats()).stdout.trim().split("\n").filter((l) => l.startsWith("quota\t"));
    expect(lines).toEqual([
      "quota\tkeys\t2\t1000000\tTOLLGATE_WORKSPACE_MAX_KEYS",
      "quota\tidentities\t0\t1000000\tTOLLGATE_WORKSPACE_MAX_IDENTITIES",
      "quota\tpermissions\t0\t10000\tTOLLGATE_WORKSPACE_MAX_PERMISSIONS",
      "quota\troles\t0\t1000\tTOLLGATE_WORKSPACE_MAX_ROLES",
      "quota\tnamespaces\t0\t10000\tTOLLGATE_WORKSPACE_MAX_NAMESPACES",
      expect.stringMatching(/^quota\tstorage\t\d+\t1073741824\tTOLLGATE_WORKSPACE_STORAGE_MB$/),
    ]);
    const json = await runCli(["stats", "--json"], { dataDir: data.dir, env: { TOLLGATE_WORKSPACE_MAX_KEYS: "7" } });
    expect(JSON.parse(json.stdout).quotas[0]).toEqual({ quota: "keys", variable: "TOLLGATE_WORKSPACE_MAX_KEYS", used: 2, limit: 7 });
  });

  test.each([
    [["--since", "last week"], "--since"],
    [["--since", "2999-01-01"], "--since"],
    [["--bogus"], "--bogus"],
    [["extra"], "no arguments"],
  ])("%p is a usage error (exit 2)", async (args, named) => {
    const r = await stats(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(named);
  });

  test("an unknown --api or --workspace exits 1 and names it", async () => {
    expect((await stats("--api", "nope")).stderr).toContain("'nope'");
    expect((await stats("--api", "nope")).code).toBe(1);
    expect((await stats("--workspace", "nope")).code).toBe(1);
  });

  test("with TOLLGATE_ANALYTICS=off nothing is recorded: exit 1, saying so on stderr", async () => {
    const r = await runCli(["stats"], { dataDir: data.dir, env: { TOLLGATE_ANALYTICS: "off" } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("TOLLGATE_ANALYTICS=off");
  });
});
