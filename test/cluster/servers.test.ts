/**
 * The cluster tests' own servers (test/support/servers.ts): PostgreSQL and Redis start on loopback,
 * answer through Bun's clients, and stop without leaving a process or a directory behind.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readlinkSync } from "node:fs";
import { RedisClient, SQL } from "bun";
import { startPostgres, startRedis } from "../support/servers.ts";
import { isGone } from "../support/processes.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

/** The working directory of `pid`: the server's own temporary directory. */
const cwdOf = (pid: number) => readlinkSync(`/proc/${pid}/cwd`);

describe.skipIf(skipWithout(missing.postgres(), "the PostgreSQL harness"))("PostgreSQL", () => {
  test("answers SQL as the tollgate superuser, then stops and leaves nothing", async () => {
    requireTool(missing.postgres());
    const pg = await startPostgres();
    const dir = cwdOf(pg.pid);
    const sql = new SQL(pg.url);
    try {
      const [row] = await sql`select current_user as "user", current_setting('server_version_num')::int as version`;
      expect(row.user).toBe("tollgate");
      expect(row.version).toBeGreaterThanOrEqual(150000);
    } finally {
      await sql.close();
      await pg.stop();
    }
    expect(isGone(pg.pid)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });
});

describe.skipIf(skipWithout(missing.redis(), "the Redis harness"))("Redis", () => {
  test("answers commands, then stops and leaves nothing", async () => {
    requireTool(missing.redis());
    const redis = await startRedis();
    const dir = cwdOf(redis.pid);
    const client = new RedisClient(redis.url);
    try {
      expect(await client.incr("n")).toBe(1);
      expect(await client.incr("n")).toBe(2);
      const info = await client.send("INFO", ["server"]) as string;
      expect(Number(/redis_version:(\d+)/.exec(info)?.[1])).toBeGreaterThanOrEqual(7);
    } finally {
      client.close();
      await redis.stop();
    }
    expect(isGone(redis.pid)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });
});
