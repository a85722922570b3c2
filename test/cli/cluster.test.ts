/**
 * The CLI and the cluster mode: `migrate-to-cluster` copies a single box's records into PostgreSQL
 * (refusing a master key the box did not use, and a database that already holds records), after
 * which a node verifies the box's keys with the same plaintext and decrypts its recoverable keys;
 * the record commands and `stats` (PostgreSQL's analytics totals) then work on the cluster's
 * records; those that read a data dir's own databases refuse.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, startServe, tempDataDir, type TempDataDir } from "../support/cli.ts";
import { SERVER_START_TIMEOUT_MS, startPostgres, startRedis, type TestServer } from "../support/servers.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const ROOT_KEY = `tg_root_${"c".repeat(24)}`;

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "the CLI in the cluster mode"))("a single box moved into a cluster", () => {
  let postgres: TestServer;
  let redis: TestServer;
  let clusterEnv: Record<string, string> = {};
  const box: TempDataDir = tempDataDir();
  const node: TempDataDir = tempDataDir();
  let boxKey = "";
  let boxKeyId = "";

  beforeAll(async () => {
    requireTool(missing.postgres());
    requireTool(missing.redis());
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    const admin = new SQL(postgres.url, { max: 1 });
    await admin.unsafe("CREATE DATABASE moved");
    await admin.close();
    const boxCli = (...args: string[]) => runCli(args, { dataDir: box.dir, env: { TOLLGATE_ROOT_KEY: ROOT_KEY } });
    expect((await boxCli("api", "create", "shop")).code).toBe(0);
    const created = await boxCli("key", "create", "--api", "shop", "--recoverable", "--credits", "5");
    expect(created.code).toBe(0);
    boxKey = created.stdout.trim();
    boxKeyId = created.stderr.trim().split("\n").at(-1)!;
    clusterEnv = {
      TOLLGATE_DATABASE_URL: postgres.url.replace(/\/postgres$/, "/moved"), TOLLGATE_REDIS_URL: redis.url,
      TOLLGATE_MASTER_KEY: readFileSync(join(box.dir, "master.key"), "utf8").trim(), TOLLGATE_ROOT_KEY: ROOT_KEY,
    };
  }, SERVER_START_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await redis?.stop();
    await postgres?.stop();
    box.cleanup();
    node.cleanup();
  });

  const clusterCli = (...args: string[]) => runCli(args, { dataDir: node.dir, env: clusterEnv });

  test("a master key the box did not use is refused, and nothing is copied", async () => {
    const r = await runCli(["migrate-to-cluster", "--from", box.dir], { dataDir: node.dir, env: { ...clusterEnv, TOLLGATE_MASTER_KEY: Buffer.alloc(32, 1).toString("base64") } });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("is not TOLLGATE_MASTER_KEY");
    const copied = await clusterCli("migrate-to-cluster", "--from", box.dir);
    expect(copied.code).toBe(0);
    expect(copied.stdout).toContain("keys\t1");
  });

  test("a second copy into the same database is refused: it holds records", async () => {
    const r = await clusterCli("migrate-to-cluster", "--from", box.dir);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("already holds records");
    expect(r.stderr).toContain("--replace");
  });

  test("a node verifies the box's key with its plaintext, with its credits, and decrypts it", async () => {
    const served = await startServe({ dataDir: node.dir, env: clusterEnv, startTimeoutMs: 30_000 });
    try {
      const verified = await served.post("/v2/keys.verifyKey", { key: boxKey }, ROOT_KEY);
      expect(verified.body.data).toMatchObject({ valid: true, code: "VALID", keyId: boxKeyId, credits: 4 });
      const got = await served.post("/v2/keys.getKey", { keyId: boxKeyId, decrypt: true }, ROOT_KEY);
      expect(got.body.data.plaintext).toBe(boxKey);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  }, 60_000);

  test("record commands and stats work on the cluster's records; backup and restore refuse", async () => {
    const listed = await clusterCli("key", "list", "--api", "shop", "--json");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((k: { keyId: string }) => k.keyId)).toEqual([boxKeyId]);
    expect((await clusterCli("key", "disable", boxKeyId)).code).toBe(0);
    expect(JSON.parse((await clusterCli("key", "get", boxKeyId, "--json")).stdout)).toMatchObject({ keyId: boxKeyId, enabled: false });
    // The node's verification above, written to PostgreSQL when it stopped.
    const stats = await clusterCli("stats", "--json");
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ total: 1, outcomes: { VALID: 1 }, apis: [{ name: "shop", total: 1 }] });
    for (const command of [["backup", join(node.parent, "b.tar")], ["restore", join(node.parent, "b.tar")]]) {
      const r = await clusterCli(...command);
      expect({ command, code: r.code }).toEqual({ command, code: 1 });
      expect(r.stderr).toContain("PostgreSQL");
    }
  }, 60_000);
});
