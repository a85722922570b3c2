/**
 * Keys with a meta of about 1 MB: how long one verification holds the server (the first, which
 * loads the key, and the later ones, answered from the cache), measured as the latency of single
 * sequential requests to an otherwise idle server, and what ten such keys add to its resident
 * memory once each was verified. Two shapes of meta: many small records (the most values to
 * parse) and one long string. A short run: a few seconds.
 */
import { rmSync } from "node:fs";
import { cpuMs, median, residentKiB, startTollgate, tempDir } from "./lib.ts";

const META_BYTES = 1_000_000;
const KEYS = 10;
const WARM_ROUNDS = 10;

/** An object of many small records whose JSON is just under `bytes`. */
function recordsMeta(bytes: number): Record<string, unknown> {
  const items: unknown[] = [];
  const meta = { plan: "enterprise", items };
  let size = JSON.stringify(meta).length;
  for (let i = 0; ; i++) {
    const item = { id: i, name: `user-${i}`, tags: ["a", "b"], score: i * 1.5, active: i % 2 === 0 };
    const added = JSON.stringify(item).length + 1;
    if (size + added > bytes) return meta;
    items.push(item);
    size += added;
  }
}

const textMeta = (bytes: number): Record<string, unknown> => ({ blob: "x".repeat(bytes - 20) });

async function main(): Promise<void> {
  const dataDir = tempDir("tollgate-bench-meta-");
  const rootKey = `tg_bench_${"k".repeat(24)}`;
  const server = await startTollgate({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: rootKey });
  // The answer is read as bytes inside the timing and parsed after it: the client's parse is not the server's time.
  const post = async (path: string, body: unknown): Promise<{ ms: number; data: any }> => {
    const text = JSON.stringify(body);
    const started = performance.now();
    const res = await fetch(server.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: text });
    const bytes = await res.arrayBuffer();
    const ms = performance.now() - started;
    const json = JSON.parse(new TextDecoder().decode(bytes)) as { data?: unknown; error?: unknown };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json.error)}`);
    return { ms, data: json.data };
  };
  try {
    const { data: api } = await post("/v2/apis.createApi", { name: "big-meta" });
    const create = async (meta: Record<string, unknown> | undefined) => (await post("/v2/keys.createKey", { apiId: api.apiId, ...(meta ? { meta } : {}) })).data.key as string;
    const small = await create({ plan: "pro" });
    const records = await Promise.all(Array.from({ length: KEYS }, () => create(recordsMeta(META_BYTES))));
    const text = await create(textMeta(META_BYTES));
    // The keys' writes are checkpointed by a background thread for a while: let it finish first.
    await Bun.sleep(3000);
    // The main thread's CPU, which is what holds the event loop (the process id is its thread id).
    const mainCpuMs = () => cpuMs(server.pid, server.pid);
    const verify = async (key: string) => (await post("/v2/keys.verifyKey", { key })).ms;
    const stats = (xs: number[]) => `${Math.min(...xs).toFixed(1)} / ${median(xs).toFixed(1)}`;
    const smallRuns: number[] = [];
    for (let i = 0; i < 20 + WARM_ROUNDS * KEYS; i++) smallRuns.push(await verify(small));
    const rssBefore = residentKiB(server.pid).rss;
    const cpuBefore = mainCpuMs();
    const cold: number[] = [];
    for (const key of records) cold.push(await verify(key));
    const coldCpuMs = (mainCpuMs() - cpuBefore) / KEYS;
    const rssAfter = residentKiB(server.pid).rss;
    const warm: number[] = [];
    const warmCpuBefore = mainCpuMs();
    for (let i = 0; i < WARM_ROUNDS; i++) for (const key of records) warm.push(await verify(key));
    const warmCpuMs = (mainCpuMs() - warmCpuBefore) / (KEYS * WARM_ROUNDS);
    const textCold = await verify(text);
    const textWarm: number[] = [];
    const textCpuBefore = mainCpuMs();
    for (let i = 0; i < WARM_ROUNDS * KEYS; i++) textWarm.push(await verify(text));
    const textWarmCpuMs = (mainCpuMs() - textCpuBefore) / (KEYS * WARM_ROUNDS);
    const smallCpuBefore = mainCpuMs();
    for (let i = 0; i < WARM_ROUNDS * KEYS; i++) await verify(small);
    const smallCpuMs = (mainCpuMs() - smallCpuBefore) / (KEYS * WARM_ROUNDS);
    console.log([
      `### keys.verifyKey of keys with a ${(META_BYTES / 1e6).toFixed(0)} MB meta (single sequential requests to an idle server)\n`,
      "Latency in ms, min / median (the minimum is the least disturbed by other load on the machine); CPU of the server's main thread in ms a request.\n",
      "| key | first verification (load) | CPU | later verifications (cache) | CPU |",
      "| --- | --- | --- | --- | --- |",
      `| meta {plan} (reference) | – | – | ${stats(smallRuns)} | ${smallCpuMs.toFixed(1)} |`,
      `| meta of small records, ${KEYS} keys | ${stats(cold)} | ${coldCpuMs.toFixed(1)} | ${stats(warm)} | ${warmCpuMs.toFixed(1)} |`,
      `| meta of one long string | ${textCold.toFixed(1)} | – | ${stats(textWarm)} | ${textWarmCpuMs.toFixed(1)} |`,
      `\nresident memory added by the first verification of the ${KEYS} record keys: ${((rssAfter - rssBefore) / 1024).toFixed(1)} MiB\n`,
    ].join("\n"));
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
