/**
 * The real `tollgate serve` as a child process: SIGTERM forgets no count (the stop flushes even when
 * the periodic flush is far off), and kill -9 keeps what the last periodic flush saved.
 * Windows are 30 days long so the real clock cannot cross a window edge during the test.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { loggedCount } from "../../../support/ratelimit-log.ts";
import { startServe, tempDataDir, type Served } from "../../../support/cli.ts";
import { perTest } from "../../../support/cli-slots.ts";

const ROOT_KEY = "tg_test_sigterm_root_key_0123456789";
const THIRTY_DAYS = 2_592_000_000;
const body = (identifier: string) => ({ namespace: "sigterm", identifier, limit: 3, duration: THIRTY_DAYS });

const t = perTest();

async function useUp(s: Served, identifier: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await s.post("/v2/ratelimit.limit", body(identifier), ROOT_KEY)).body.data.success).toBe(true);
}

/** Resolves once the flush has stored `count` for `identifier` (deadline 5 s). */
async function flushed(dataDir: string, identifier: string, count: number): Promise<void> {
  const db = new Database(join(dataDir, "tollgate.db"), { readonly: true });
  try {
    const deadline = Date.now() + 5000;
    while (loggedCount(db, identifier) !== count) {
      if (Date.now() > deadline) throw new Error(`no flush of '${identifier}' within 5 s`);
      await Bun.sleep(10);
    }
  } finally {
    db.close();
  }
}

test("SIGTERM, start again: a used-up window is still used up", async () => {
  t.data = tempDataDir();
  const env = { TOLLGATE_ROOT_KEY: ROOT_KEY, TOLLGATE_RATELIMIT_FLUSH_MS: "60000" };
  t.served = await startServe({ dataDir: t.data.dir, env });
  await useUp(t.served, "user_1");
  expect(await t.served.stop()).toBe(0);
  t.served = await startServe({ dataDir: t.data.dir, env });
  expect((await t.served.post("/v2/ratelimit.limit", body("user_1"), ROOT_KEY)).body.data).toMatchObject({ success: false, remaining: 0 });
  expect((await t.served.post("/v2/ratelimit.limit", body("user_2"), ROOT_KEY)).body.data.success).toBe(true);
});

test("kill -9 after a periodic flush: the flushed counts survive", async () => {
  t.data = tempDataDir();
  const env = { TOLLGATE_ROOT_KEY: ROOT_KEY, TOLLGATE_RATELIMIT_FLUSH_MS: "50" };
  t.served = await startServe({ dataDir: t.data.dir, env });
  await useUp(t.served, "user_9");
  await flushed(t.data.dir, "user_9", 3);
  process.kill(t.served.pid, "SIGKILL");
  await t.served.stop(); // only waits for the exit: the child is already gone
  t.served = await startServe({ dataDir: t.data.dir, env });
  expect((await t.served.post("/v2/ratelimit.limit", body("user_9"), ROOT_KEY)).body.data.success).toBe(false);
});
