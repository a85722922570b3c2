/**
 * analytics.getVerifications over a year of 10,000 keys' per-day rollups: one rollup row per key
 * and day (3.65 million), one more a day for every tenth key (rate limited), and their totals as
 * the event writer keeps them. Each query goes over HTTP to `tollgate serve`, one at a time, and
 * the same request to the bare Bun.serve echo in the same run; prints the latency per query and
 * its ratio to the echo. Target: the 365-day per-day query under 100 ms. The two per-key and
 * per-owner queries read the rollup itself and are shown for what they cost (time limit raised).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildServices, openDataDir } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { systemClock } from "../src/lib/clock.ts";
import type { Storage } from "../src/storage/db.ts";
import { answered } from "../src/storage/work.ts";
import { ALL_GRANTS } from "../src/services/auth/index.ts";
import { startServer, startTollgate, tempDir } from "./lib.ts";

/** Its own variable: BENCH_KEYS is verify.ts's list of key counts, and `bun run bench` passes it to every suite. */
const KEY_COUNT = Number(process.env.BENCH_QUERY_KEYS ?? 10_000);
if (!Number.isInteger(KEY_COUNT) || KEY_COUNT < 1) throw new Error(`BENCH_QUERY_KEYS must be a positive integer, got ${process.env.BENCH_QUERY_KEYS}`);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const DAY_MS = 86_400_000;

interface Seeded {
  rootKey: string;
  keySpaceId: string;
}

/** Workspace, root key and four APIs through the real services; the rollups straight into SQLite, a day per transaction. */
function seed(dataDir: string): Seeded {
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const opened = openDataDir(config, silentLogger);
  const { storage } = opened;
  const services = buildServices(opened, config, systemClock);
  const actor = { type: "cli" as const, id: "bench" };
  const ws = answered(services.workspaces.create({ name: "default", analyticsEnabled: true }, actor));
  const rootKey = answered(services.workspaces.createRootKey({ workspace: "default", name: "bench", permissions: [...ALL_GRANTS] }, actor)).key;
  const principal = services.auth.authenticate(`Bearer ${rootKey}`);
  const spaces = Array.from({ length: 4 }, (_, i) => answered(services.apis.createApi(principal, { name: `bench-${i}` })).apiId)
    .map((apiId) => storage.sqlite.query<{ key_space_id: string }, [string]>("SELECT key_space_id FROM apis WHERE id = ?1").get(apiId)!.key_space_id);
  insertRollups(opened.analytics, ws.id, spaces);
  opened.close();
  return { rootKey, keySpaceId: spaces[0]! };
}

function insertRollups(storage: Storage, workspaceId: string, spaces: string[]): void {
  const insert = storage.sqlite.prepare<unknown, [number, string, string, string, string, number]>(
    `INSERT INTO verification_rollups_day (time, workspace_id, key_space_id, key_id, identity_id, external_id, outcome, tags, count, spent_credits, latency_sum_ms, latency_max_ms)
     VALUES (?1, '${workspaceId}', ?2, ?3, '', ?4, ?5, '[]', ?6, 0, ?6, 1)`,
  );
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  for (let d = 0; d < DAYS; d++) {
    storage.sqlite.transaction(() => {
      for (let k = 0; k < KEY_COUNT; k++) {
        const args = [today - d * DAY_MS, spaces[k % spaces.length]!, `key_${k}`, `owner_${k % 1000}`] as const;
        insert.run(...args, "VALID", 1 + ((k * 7 + d) % 20));
        if (k % 10 === 0) insert.run(...args, "RATE_LIMITED", 1 + (d % 3));
      }
    })();
  }
  // What the event writer keeps alongside, as migration 0002 computes it.
  storage.sqlite.run(`INSERT INTO verification_totals_day (time, workspace_id, key_space_id, outcome, count, spent_credits)
    SELECT time, workspace_id, key_space_id, outcome, sum(count), sum(spent_credits) FROM verification_rollups_day GROUP BY workspace_id, time, key_space_id, outcome`);
  storage.sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
}

interface Timing {
  p50: number;
  p95: number;
  max: number;
  rows: number;
}

/** Sends `body` to `url` `rounds` times, one after the other, after two unmeasured ones. */
async function measure(url: string, rootKey: string, body: string, rounds: number): Promise<Timing> {
  const send = async () => {
    const res = await fetch(`${url}/v2/analytics.getVerifications`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body });
    const json = (await res.json()) as { data?: unknown[]; error?: { detail: string } };
    if (res.status !== 200) throw new Error(`${res.status}: ${json.error?.detail}`);
    return json.data?.length ?? 0;
  };
  await send();
  await send();
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    rows = await send();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p95: at(0.95), max: times[times.length - 1]!, rows };
}

async function main() {
  const dataDir = tempDir("tollgate-bench-analytics-query-");
  const started = performance.now();
  const { rootKey, keySpaceId } = seed(dataDir);
  console.error(`seeded ${KEY_COUNT} keys × ${DAYS} days of per-day rollups in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const since = `time > now() - INTERVAL ${DAYS} DAY`;
  const queries: Array<[string, string, number]> = [
    [`${DAYS}-day daily counts of the workspace (target < 100 ms)`,
      `SELECT time, SUM(count) AS total, sumIf(count, outcome = 'VALID') AS valid FROM key_verifications_per_day_v1 WHERE ${since} GROUP BY time ORDER BY time`, ROUNDS],
    [`${DAYS}-day daily counts of one API`,
      `SELECT time, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE ${since} AND key_space_id = '${keySpaceId}' GROUP BY time ORDER BY time`, ROUNDS],
    [`${DAYS}-day daily counts of one key (reads the rollup)`,
      `SELECT time, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE ${since} AND key_id = 'key_42' GROUP BY time ORDER BY time`, 5],
    [`${DAYS}-day top 10 owners (reads the rollup)`,
      `SELECT external_id, SUM(count) AS total FROM key_verifications_per_day_v1 WHERE ${since} GROUP BY external_id ORDER BY total DESC LIMIT 10`, 3],
  ];
  const echo = await startServer(["bun", join("bench", "echo.ts")]);
  // The last two queries scan millions of rows; a raised limit lets them finish and be measured.
  const tollgate = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ANALYTICS_QUERY_TIMEOUT_MS: "60000" });
  try {
    console.log(`### analytics.getVerifications — ${KEY_COUNT} keys × ${DAYS} days of per-day rollups, one request at a time\n`);
    console.log("| query | rows | echo p50 ms | tollgate p50 ms | p95 ms | max ms | p50 ratio |\n| --- | --- | --- | --- | --- | --- | --- |");
    for (const [name, query, rounds] of queries) {
      const body = JSON.stringify({ query });
      const e = await measure(echo.url, rootKey, body, rounds);
      const t = await measure(tollgate.url, rootKey, body, rounds);
      console.log(`| ${name} | ${t.rows} | ${e.p50.toFixed(2)} | ${t.p50.toFixed(1)} | ${t.p95.toFixed(1)} | ${t.max.toFixed(1)} | ${(t.p50 / e.p50).toFixed(0)} |`);
    }
  } finally {
    await tollgate.stop();
    await echo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
