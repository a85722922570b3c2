/**
 * keys.verifyKey under load: 100,000 keys in the store, each verification on a random known key with
 * one permission query and a credit spend; against the bare Bun.serve echo in the same run with the
 * same load generator (wrk, 50 connections, 10 s, loopback). Prints a Markdown table and the ratios.
 */
import { join } from "node:path";
import { openDataDir, buildServices } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { systemClock } from "../src/lib/clock.ts";
import { inTransaction } from "../src/storage/db.ts";
import { ALL_GRANTS } from "../src/services/auth/index.ts";
import { formatRow, postRandomBodiesLua, startServer, startTollgate, TABLE_HEADER, tempDir, wrk } from "./lib.ts";

const KEY_COUNT = Number(process.env.BENCH_KEYS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

/** Creates the API and the keys through the real service, in one transaction for speed. */
function seed(dataDir: string): { rootKey: string; keys: string[] } {
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const storage = openDataDir(config, silentLogger);
  const services = buildServices(storage, config, systemClock);
  const actor = { type: "cli" as const, id: "bench" };
  services.workspaces.create({ name: "default" }, actor);
  const rootKey = services.workspaces.createRootKey({ workspace: "default", name: "bench", permissions: [...ALL_GRANTS] }, actor).key;
  const principal = services.auth.authenticate(`Bearer ${rootKey}`);
  const { apiId } = services.apis.createApi(principal, { name: "bench" });
  const keys = inTransaction(storage, () => Array.from({ length: KEY_COUNT }, (_, i) => services.keys.createKey(principal, {
    apiId, prefix: "bk", permissions: ["documents.read", `documents.${i % 7}`], credits: { remaining: 1_000_000_000 },
  }).key));
  storage.close();
  return { rootKey, keys };
}

async function main() {
  const dataDir = tempDir("tollgate-bench-verify-");
  const started = performance.now();
  const { rootKey, keys } = seed(dataDir);
  console.error(`seeded ${keys.length} keys in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const bodies = keys.map((key) => JSON.stringify({ key, permissions: "documents.read", credits: { cost: 1 } }));
  const lua = postRandomBodiesLua("/v2/keys.verifyKey", rootKey, bodies);

  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir });
  try {
    await wrk(echo.url, lua, { seconds: 2 });
    await wrk(tollgate.url, lua, { seconds: 3 });
    const e = await wrk(echo.url, lua, { seconds: SECONDS });
    const t = await wrk(tollgate.url, lua, { seconds: SECONDS });
    console.log(`### keys.verifyKey (${KEY_COUNT} keys, permission query + credits, 50 connections, ${SECONDS} s)\n`);
    console.log(TABLE_HEADER);
    console.log(formatRow("Bun.serve echo", e));
    console.log(formatRow("tollgate keys.verifyKey", t));
    console.log(`\nthroughput ratio ${(t.requestsPerSec / e.requestsPerSec).toFixed(2)} (target >= 0.75); p99 ratio ${(t.p99Ms / e.p99Ms).toFixed(2)} (target <= 1.5)`);
  } finally {
    await tollgate.stop();
    await echo.stop();
  }
}

await main();
