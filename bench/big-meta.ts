/**
 * Keys with a meta of about 1 MB: how long one verification holds the server (the first, which
 * loads the key, and the later ones, answered from the cache), measured as the latency of single
 * sequential requests to an otherwise idle server, and what ten such keys add to its resident
 * memory once each was verified. Two shapes of meta: many small records (the most values to
 * parse) and one long string. A short run: a few seconds.
 */
import { rmSync } from "node:fs";
import { cpuMs, median, recordsMeta, residentKiB, startTollgate, tempDir } from "./lib.ts";

const META_BYTES = 1_000_000;
const KEYS = 10;
const WARM_ROUNDS = 10;

const textMeta = (bytes: number): Record<string, unknown> => ({ blob: "x".repeat(bytes - 20) });

type Post = (path: string, body: unknown) => Promise<{ ms: number; data: any }>;

/** POSTs with the root key; the answer is read as bytes inside the timing and parsed after it (the client's parse is not the server's time). */
function client(url: string, rootKey: string): Post {
  return async (path, body) => {
    const text = JSON.stringify(body);
    const started = performance.now();
    const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: text });
    const bytes = await res.arrayBuffer();
    const ms = performance.now() - started;
    const json = JSON.parse(new TextDecoder().decode(bytes)) as { data?: unknown; error?: unknown };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json.error)}`);
    return { ms, data: json.data };
  };
}

interface Timed {
  ms: number[];
  /** CPU of the server's main thread, which is what holds the event loop, per request. */
  cpuMs: number;
}

/** Verifies each key `rounds` times, one request at a time. */
async function timedVerifications(post: Post, pid: number, keys: string[], rounds: number): Promise<Timed> {
  const cpuBefore = cpuMs(pid, pid);
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) for (const key of keys) ms.push((await post("/v2/keys.verifyKey", { key })).ms);
  return { ms, cpuMs: (cpuMs(pid, pid) - cpuBefore) / (keys.length * rounds) };
}

function report(small: Timed, cold: Timed, warm: Timed, text: { cold: Timed; warm: Timed }, rssAddedKiB: number): string {
  const ms = (t: Timed) => `${Math.min(...t.ms).toFixed(1)} / ${median(t.ms).toFixed(1)}`;
  return [
    `### keys.verifyKey of keys with a ${(META_BYTES / 1e6).toFixed(0)} MB meta (single sequential requests to an idle server)\n`,
    "Latency in ms, min / median (the minimum is the least disturbed by other load on the machine); CPU of the server's main thread in ms a request.\n",
    "| key | first verification (load) | CPU | later verifications (cache) | CPU |",
    "| --- | --- | --- | --- | --- |",
    `| meta {plan} (reference) | – | – | ${ms(small)} | ${small.cpuMs.toFixed(1)} |`,
    `| meta of small records, ${KEYS} keys | ${ms(cold)} | ${cold.cpuMs.toFixed(1)} | ${ms(warm)} | ${warm.cpuMs.toFixed(1)} |`,
    `| meta of one long string | ${ms(text.cold)} | ${text.cold.cpuMs.toFixed(1)} | ${ms(text.warm)} | ${text.warm.cpuMs.toFixed(1)} |`,
    `\nresident memory added by the first verification of the ${KEYS} record keys: ${(rssAddedKiB / 1024).toFixed(1)} MiB\n`,
  ].join("\n");
}

async function main(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-meta-");
  const rootKey = `tg_bench_${"k".repeat(24)}`;
  const server = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: rootKey });
  const post = client(server.url, rootKey);
  try {
    const { data: api } = await post("/v2/apis.createApi", { name: "big-meta" });
    const create = async (meta: Record<string, unknown>) => (await post("/v2/keys.createKey", { apiId: api.apiId, meta })).data.key as string;
    const small = await create({ plan: "pro" });
    const records = await Promise.all(Array.from({ length: KEYS }, () => create(recordsMeta(META_BYTES))));
    const text = await create(textMeta(META_BYTES));
    // The keys' writes are checkpointed by a background thread for a while: let it finish first.
    await Bun.sleep(3000);
    await timedVerifications(post, server.pid, [small], 20);
    const smallTimed = await timedVerifications(post, server.pid, [small], WARM_ROUNDS * KEYS);
    const rssBefore = residentKiB(server.pid).rss;
    const cold = await timedVerifications(post, server.pid, records, 1);
    const rssAdded = residentKiB(server.pid).rss - rssBefore;
    const warm = await timedVerifications(post, server.pid, records, WARM_ROUNDS);
    const textTimed = { cold: await timedVerifications(post, server.pid, [text], 1), warm: await timedVerifications(post, server.pid, [text], WARM_ROUNDS * KEYS) };
    console.log(report(smallTimed, cold, warm, textTimed, rssAdded));
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
