/**
 * Big list pages against a neighbour: workspace A holds 100 identities and 40 keys with about 1 MB
 * of meta each and lists them four times in parallel (identities.listIdentities and apis.listKeys
 * with limit 100, each following the cursors to the end), while workspace B verifies a small key
 * in a closed loop on one connection. Reports B's verification latency alone and during the
 * listing (the maximum is the figure: how long one list page holds the event loop that B shares),
 * the server's peak resident memory, and how long the listings took.
 * BIG_LISTS_ROOT runs another checkout of tollgate (e.g. an export of main) for a before/after.
 * A short run: a minute or two, most of it writing the records.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { cpuMs, freePort, median, recordsMeta, residentKiB, ROOT, tempDir } from "./lib.ts";

const META_BYTES = 1_000_000;
const IDENTITIES = 100;
const KEYS = 40;
const LISTERS = 4;
const ROUNDS = Number(process.env.BIG_LISTS_ROUNDS ?? 2);
/** A member each listed item has once, and its metas never (their records have id, name, tags, score, active). */
const IDENTITY_MARKER = '"externalId":';
const KEY_MARKER = '"keyId":';

interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function serve(root: string, env: Record<string, string>): Promise<Server> {
  const port = freePort();
  const proc = Bun.spawn(["bun", "run", join("src", "main.ts"), "serve"], {
    cwd: root, env: { ...process.env, TOLLGATE_LOG_LEVEL: "warn", ...env, TOLLGATE_PORT: String(port) }, stdout: "ignore", stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = performance.now() + 30_000; performance.now() < deadline; await Bun.sleep(50)) {
    if (await fetch(`${url}/v2/liveness`).then((r) => r.ok, () => false)) {
      return { url, pid: proc.pid, stop: async () => { proc.kill("SIGTERM"); await proc.exited; } };
    }
  }
  proc.kill("SIGKILL");
  throw new Error(`tollgate did not answer on ${url}`);
}

/** Runs a CLI command of the checkout at `root` and answers its stdout. */
function cli(root: string, env: Record<string, string>, args: string[]): string {
  const run = Bun.spawnSync(["bun", "run", join("src", "main.ts"), ...args], { cwd: root, env: { ...process.env, TOLLGATE_LOG_LEVEL: "warn", ...env } });
  if (run.exitCode !== 0) throw new Error(`tollgate ${args.join(" ")}: ${run.stderr.toString()}`);
  return run.stdout.toString().trim();
}

type Post = (path: string, body: unknown) => Promise<{ ms: number; bytes: number; body: any }>;

function client(url: string, rootKey: string): Post {
  return async (path, body) => {
    const started = performance.now();
    const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify(body) });
    const bytes = await res.arrayBuffer();
    const ms = performance.now() - started;
    const json = JSON.parse(new TextDecoder().decode(bytes));
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json.error)}`);
    return { ms, bytes: bytes.byteLength, body: json };
  };
}

interface Walked {
  items: number;
  pages: number;
  maxBytes: number;
  /** The error that ended the walk early (a connection the server closed, say). */
  failed?: string;
}

/**
 * POSTs a list page and reads only what the walk needs from its text: the items counted by a
 * member each item has once (`marker`) and the cursor at the end. The pages are not parsed: the
 * listers share the machine with the server and the neighbour, and the client's parse of megabytes
 * is not the server's work.
 */
async function listPage(url: string, rootKey: string, path: string, body: unknown, marker: string): Promise<{ items: number; bytes: number; cursor: string | undefined }> {
  const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  const tail = /"pagination":(\{[^}]*\})\}$/.exec(text);
  if (tail === null) throw new Error(`${path}: no pagination at the end of the page`);
  const pagination = JSON.parse(tail[1]!) as { cursor?: string };
  return { items: text.split(marker).length - 1, bytes: Buffer.byteLength(text), cursor: pagination.cursor };
}

/** Follows a list route's cursors to the end; answers the items and pages seen and the largest page in bytes. */
async function walk(url: string, rootKey: string, path: string, body: Record<string, unknown>, marker: string): Promise<Walked> {
  let cursor: string | undefined;
  const seen: Walked = { items: 0, pages: 0, maxBytes: 0 };
  do {
    try {
      const page = await listPage(url, rootKey, path, { ...body, limit: 100, ...(cursor === undefined ? {} : { cursor }) }, marker);
      seen.items += page.items;
      seen.pages += 1;
      seen.maxBytes = Math.max(seen.maxBytes, page.bytes);
      cursor = page.cursor;
    } catch (error) {
      return { ...seen, failed: error instanceof Error ? error.message.split(".")[0]! : String(error) };
    }
  } while (cursor !== undefined);
  return seen;
}

/** Verifies `key` one request at a time until `done` resolves; answers each latency in ms. */
async function verifyUntil(post: Post, key: string, done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.finally(() => { finished = true; });
  const ms: number[] = [];
  while (!finished) {
    const res = await post("/v2/keys.verifyKey", { key });
    if (res.body.data.valid !== true) throw new Error("the neighbour's key did not verify");
    ms.push(res.ms);
  }
  return ms;
}

/**
 * The neighbour in a process of its own, so that the listers' parsing of their pages never delays
 * its clock: verifies until its stdin ends, then prints its latencies as JSON.
 */
async function neighbourProcess(url: string, rootKey: string, key: string): Promise<void> {
  const stdinEnds = (async () => { for await (const _ of Bun.stdin.stream()) { /* until it ends */ } })();
  console.log(JSON.stringify(await verifyUntil(client(url, rootKey), key, stdinEnds)));
}

/** Runs the neighbour's verifications in their own process while `during` runs; answers their latencies. */
async function neighbourDuring(server: Server, rootKey: string, key: string, during: Promise<unknown>): Promise<number[]> {
  const proc = Bun.spawn(["bun", import.meta.path], {
    env: { ...process.env, BIG_LISTS_NEIGHBOUR: JSON.stringify({ url: server.url, rootKey, key }) }, stdin: "pipe", stdout: "pipe", stderr: "inherit",
  });
  await during.catch(() => undefined);
  proc.stdin.end();
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out) as number[];
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN;
const fmt = (xs: number[]) => `${median(xs).toFixed(1)} / ${percentile(xs, 0.99).toFixed(1)} / ${Math.max(...xs).toFixed(1)}`;

async function main(): Promise<void> {
  const root = process.env.BIG_LISTS_ROOT ?? ROOT;
  const dataDir = tempDir("tollgate-bench-lists-");
  const rootKey = `tg_bench_${"k".repeat(24)}`;
  const env = { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_ROOT_KEY: rootKey };
  const server = await serve(root, env);
  try {
    const a = client(server.url, rootKey);
    cli(root, env, ["workspace", "create", "--name", "neighbour"]);
    const grants = ["api.*.create_api", "api.*.create_key", "api.*.verify_key"].flatMap((p) => ["--permission", p]);
    const bRootKey = cli(root, env, ["root-key", "create", "--workspace", "neighbour", "--name", "bench", ...grants]);
    const b = client(server.url, bRootKey);
    const bApi = (await b("/v2/apis.createApi", { name: "neighbour" })).body.data.apiId;
    const bKey = (await b("/v2/keys.createKey", { apiId: bApi })).body.data.key as string;

    const apiId = (await a("/v2/apis.createApi", { name: "big-lists" })).body.data.apiId;
    for (let i = 0; i < IDENTITIES; i++) await a("/v2/identities.createIdentity", { externalId: `user_${i}`, meta: recordsMeta(META_BYTES, { seed: i }) });
    for (let i = 0; i < KEYS; i++) await a("/v2/keys.createKey", { apiId, meta: recordsMeta(META_BYTES, { seed: i }) });
    // The writes are checkpointed by a background thread for a while: let it finish first.
    await Bun.sleep(3000);

    const alone = await neighbourDuring(server, bRootKey, bKey, Bun.sleep(3000));
    // One listing alone, page by page: the main thread's CPU per page is what a page holds the event loop for at most.
    const single = async (path: string, body: Record<string, unknown>, marker: string) => {
      const cpuBefore = cpuMs(server.pid, server.pid);
      const started = performance.now();
      const walked = await walk(server.url, rootKey, path, body, marker);
      return { ms: (performance.now() - started) / walked.pages, cpuMs: (cpuMs(server.pid, server.pid) - cpuBefore) / walked.pages };
    };
    const singleIdentities = await single("/v2/identities.listIdentities", {}, IDENTITY_MARKER);
    const singleKeys = await single("/v2/apis.listKeys", { apiId }, KEY_MARKER);
    let peakRss = residentKiB(server.pid).rss;
    const sampler = setInterval(() => { peakRss = Math.max(peakRss, residentKiB(server.pid).rss); }, 20);
    const started = performance.now();
    const listing = (async () => {
      const walks = [];
      for (let round = 0; round < ROUNDS; round++) {
        walks.push(...await Promise.all(Array.from({ length: LISTERS }, async () => [
          await walk(server.url, rootKey, "/v2/identities.listIdentities", {}, IDENTITY_MARKER),
          await walk(server.url, rootKey, "/v2/apis.listKeys", { apiId }, KEY_MARKER),
        ])));
      }
      return walks;
    })();
    const during = await neighbourDuring(server, bRootKey, bKey, listing);
    const walks = await listing;
    const listingMs = performance.now() - started;
    clearInterval(sampler);
    const [identities, keys] = walks[0]!;
    const failures = walks.flat().filter((w) => w.failed !== undefined);
    console.log([
      `### ${LISTERS} parallel listings of ${IDENTITIES} identities and ${KEYS} keys with a ${(META_BYTES / 1e6).toFixed(0)} MB meta each, while another workspace verifies a key\n`,
      `Checkout: ${root}. Each listing walks identities.listIdentities and apis.listKeys (limit 100) to the end; ${ROUNDS} rounds of ${LISTERS}.\n`,
      "| | value |",
      "| --- | --- |",
      `| neighbour's verifyKey alone, ms (median / p99 / max) | ${fmt(alone)} |`,
      `| neighbour's verifyKey during the listings, ms (median / p99 / max) | ${fmt(during)} (${during.length} verifications) |`,
      `| of those over 100 ms, over 250 ms | ${during.filter((ms) => ms > 100).length}, ${during.filter((ms) => ms > 250).length} |`,
      `| one listing alone: ms a page, server main-thread CPU ms a page (identities; keys) | ${singleIdentities.ms.toFixed(1)}, ${singleIdentities.cpuMs.toFixed(1)}; ${singleKeys.ms.toFixed(1)}, ${singleKeys.cpuMs.toFixed(1)} |`,
      `| pages per listing (identities, keys) | ${identities!.pages}, ${keys!.pages} |`,
      `| largest page, MB (identities, keys) | ${(identities!.maxBytes / 1e6).toFixed(1)}, ${(keys!.maxBytes / 1e6).toFixed(1)} |`,
      `| all listings, s | ${(listingMs / 1000).toFixed(1)} |`,
      `| peak resident memory, MiB | ${(peakRss / 1024).toFixed(0)} |`,
      `| listings that failed | ${failures.length} of ${walks.length * 2}${failures.length > 0 ? ` (${[...new Set(failures.map((w) => w.failed))].join("; ")})` : ""} |`,
    ].join("\n"));
    const incomplete = walks.flat().filter((w) => w.failed === undefined && w.items !== IDENTITIES && w.items !== KEYS);
    if (incomplete.length > 0) throw new Error(`a listing saw ${incomplete[0]!.items} items`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const neighbour = process.env.BIG_LISTS_NEIGHBOUR;
  if (neighbour === undefined) await main();
  else {
    const { url, rootKey, key } = JSON.parse(neighbour) as { url: string; rootKey: string; key: string };
    await neighbourProcess(url, rootKey, key);
  }
}
