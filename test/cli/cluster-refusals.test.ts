/**
 * What a cluster node refuses with exit 78 instead of serving wrongly, each message naming what
 * settles it: a database `cluster-init` did not prepare (a mistyped name: left untouched), a master
 * key other than the cluster's (its fingerprint in PostgreSQL), a data dir holding a box's
 * tollgate.db (TOLLGATE_CLUSTER_IGNORE_BOX_DATABASE overrides); `cluster-init` itself refuses an
 * initialised database unless --adopt. Also: a node's data dir made beforehand becomes 0700, and
 * `migrate` in the cluster mode writes no SQLite file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { masterKeyFingerprint } from "../../src/lib/key-fingerprint.ts";
import { runCli, startServe, tempDataDir, type TempDataDir } from "../support/cli.ts";
import { SERVER_START_TIMEOUT_MS, startPostgres, startRedis, type TestServer } from "../support/servers.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const MASTER_KEY = Buffer.alloc(32, 9).toString("base64");
const OTHER_KEY = Buffer.alloc(32, 10).toString("base64");
const ROOT_KEY = `tg_root_${"r".repeat(24)}`;

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "the cluster's refusals"))("a cluster node refuses what would silently go wrong", () => {
  let postgres: TestServer;
  let redis: TestServer;
  let admin: SQL;
  const dirs: TempDataDir[] = [];
  let databases = 0;

  beforeAll(async () => {
    requireTool(missing.postgres());
    requireTool(missing.redis());
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    admin = new SQL(postgres.url, { max: 1 });
  }, SERVER_START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await admin?.close();
    await redis?.stop();
    await postgres?.stop();
    for (const dir of dirs) dir.cleanup();
  });

  /** A new empty database and the cluster environment that names it. */
  const freshDatabase = async (masterKey = MASTER_KEY) => {
    const name = `refusals_${++databases}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = postgres.url.replace(/\/postgres$/, `/${name}`);
    return { url, env: { TOLLGATE_DATABASE_URL: url, TOLLGATE_REDIS_URL: redis.url, TOLLGATE_MASTER_KEY: masterKey, TOLLGATE_ROOT_KEY: ROOT_KEY } };
  };
  const dataDir = () => {
    const dir = tempDataDir();
    dirs.push(dir);
    return dir.dir;
  };
  const tablesOf = async (url: string) => {
    const sql = new SQL(url, { max: 1 });
    try {
      return (await sql`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`)[0].n as number;
    } finally {
      await sql.close();
    }
  };

  // First: the role is the server's, and once another test's migrations created it, no migration creates it again.
  test("migrations by a user without CREATEROLE fail naming the role and the grant; with the grant docs/cluster.md gives they apply", async () => {
    await admin.unsafe(`CREATE ROLE plain LOGIN`);
    await admin.unsafe(`CREATE DATABASE plain OWNER plain`);
    const url = new URL(postgres.url.replace(/\/postgres$/, "/plain"));
    url.username = "plain";
    const env = { TOLLGATE_DATABASE_URL: url.href, TOLLGATE_REDIS_URL: redis.url, TOLLGATE_MASTER_KEY: MASTER_KEY, TOLLGATE_ROOT_KEY: ROOT_KEY };
    const refused = await runCli(["cluster-init"], { dataDir: dataDir(), env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("tollgate_analytics_reader");
    expect(refused.stderr).toContain("WITH ADMIN OPTION");
    await admin.unsafe(`CREATE ROLE tollgate_analytics_reader NOLOGIN`);
    await admin.unsafe(`GRANT tollgate_analytics_reader TO plain WITH ADMIN OPTION`);
    expect((await runCli(["cluster-init"], { dataDir: dataDir(), env })).code).toBe(0);
  }, 60_000);

  test("serve and the record commands on a database cluster-init did not prepare exit 78 naming it, and leave it untouched", async () => {
    const { url, env } = await freshDatabase();
    const served = await runCli(["serve"], { dataDir: dataDir(), env });
    expect(served.code).toBe(78);
    expect(served.stderr).toContain("tollgate cluster-init");
    expect(served.stderr).not.toContain(url);
    const listed = await runCli(["root-key", "list", "--workspace", "default"], { dataDir: dataDir(), env });
    expect(listed.code).toBe(78);
    expect(listed.stderr).toContain("tollgate cluster-init");
    expect(await tablesOf(url)).toBe(0);
  }, 60_000);

  test("cluster-init creates workspace default, its root key file and the fingerprint; a second one is refused naming --adopt", async () => {
    const { url, env } = await freshDatabase();
    const { TOLLGATE_ROOT_KEY: _, ...withoutRootKey } = env;
    const initDir = dataDir();
    const init = await runCli(["cluster-init"], { dataDir: initDir, env: withoutRootKey });
    expect(init.code).toBe(0);
    const rootKey = readFileSync(join(initDir, "bootstrap-root-key"), "utf8").trim();
    expect(statSync(join(initDir, "bootstrap-root-key")).mode & 0o777).toBe(0o600);
    const sql = new SQL(url, { max: 1 });
    const [row] = await sql`SELECT value FROM cluster_settings WHERE name = 'master_key_fingerprint'`;
    await sql.close();
    expect(row.value).toBe(masterKeyFingerprint(Buffer.from(MASTER_KEY, "base64")));
    expect(row.value).not.toContain(MASTER_KEY);

    const again = await runCli(["cluster-init"], { dataDir: dataDir(), env: withoutRootKey });
    expect(again.code).toBe(78);
    expect(again.stderr).toContain("--adopt");

    const served = await startServe({ dataDir: dataDir(), env: withoutRootKey, startTimeoutMs: 30_000 });
    try {
      expect((await served.post("/v2/apis.listApis", {}, rootKey)).status).toBe(200);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  }, 90_000);

  test("a node whose TOLLGATE_MASTER_KEY is not the cluster's exits 78 naming the variable; cluster-init --adopt records a new one", async () => {
    const { url, env } = await freshDatabase();
    expect((await runCli(["cluster-init"], { dataDir: dataDir(), env })).code).toBe(0);
    const other = { ...env, TOLLGATE_MASTER_KEY: OTHER_KEY };
    const served = await runCli(["serve"], { dataDir: dataDir(), env: other });
    expect(served.code).toBe(78);
    expect(served.stderr).toContain("TOLLGATE_MASTER_KEY");
    expect(served.stderr).toContain("--adopt");
    expect(served.stderr).not.toContain(OTHER_KEY);
    const initOther = await runCli(["cluster-init"], { dataDir: dataDir(), env: other });
    expect(initOther.code).toBe(78);
    expect(initOther.stderr).toContain("TOLLGATE_MASTER_KEY");

    // A cluster of an earlier version: workspaces, no fingerprint.
    const sql = new SQL(url, { max: 1 });
    await sql`DELETE FROM cluster_settings`;
    await sql.close();
    const unfingerprinted = await runCli(["root-key", "list", "--workspace", "default"], { dataDir: dataDir(), env });
    expect(unfingerprinted.code).toBe(78);
    expect(unfingerprinted.stderr).toContain("cluster-init --adopt");
    expect((await runCli(["cluster-init", "--adopt"], { dataDir: dataDir(), env })).code).toBe(0);
    expect((await runCli(["root-key", "list", "--workspace", "default"], { dataDir: dataDir(), env })).code).toBe(0);
  }, 90_000);

  test("serve from a data dir holding a box's tollgate.db exits 78 naming migrate-to-cluster and the override; a data dir made beforehand becomes 0700", async () => {
    const { env } = await freshDatabase();
    expect((await runCli(["cluster-init"], { dataDir: dataDir(), env })).code).toBe(0);
    const boxDir = dataDir();
    expect((await runCli(["migrate"], { dataDir: boxDir, env: {} })).code).toBe(0);
    expect(existsSync(join(boxDir, "tollgate.db"))).toBe(true);
    const refused = await runCli(["serve"], { dataDir: boxDir, env });
    expect(refused.code).toBe(78);
    expect(refused.stderr).toContain(`migrate-to-cluster --from ${boxDir}`);
    expect(refused.stderr).toContain("TOLLGATE_CLUSTER_IGNORE_BOX_DATABASE=on");

    const ignoring = await startServe({ dataDir: boxDir, env: { ...env, TOLLGATE_CLUSTER_IGNORE_BOX_DATABASE: "on" }, startTimeoutMs: 30_000 });
    expect(await ignoring.stop()).toBe(0);

    const made = dataDir();
    mkdirSync(made, { mode: 0o755 });
    writeFileSync(join(made, "notes"), "x", { mode: 0o644 });
    const node = await startServe({ dataDir: made, env, startTimeoutMs: 30_000 });
    try {
      expect(statSync(made).mode & 0o777).toBe(0o700);
    } finally {
      expect(await node.stop()).toBe(0);
    }
  }, 90_000);

  test("migrate in the cluster mode applies PostgreSQL's migrations and writes no SQLite file", async () => {
    const { url, env } = await freshDatabase();
    const dir = dataDir();
    const migrated = await runCli(["migrate"], { dataDir: dir, env });
    expect(migrated.code).toBe(0);
    expect(await tablesOf(url)).toBeGreaterThan(0);
    expect(existsSync(dir) ? readdirSync(dir).filter((f) => f.includes(".db")) : []).toEqual([]);
  }, 60_000);
});
