/**
 * What the fault suites (faults-*.test.ts) share: a `tollgate serve` node as a child process on
 * servers of the file's own, a load of metered verifications counted by their answers, probes of
 * cached keys and Redis-backed limits timed while a server is away, and PostgreSQL's own count of
 * the credits taken, to reconcile the two. The load talks only to 127.0.0.1 and stops when told.
 */
import { SQL } from "bun";
import { startServe, tempDataDir, type Served, type TempDataDir } from "../support/cli.ts";
import type { ClusterServers } from "../support/cluster-backend.ts";

/** How many credits each metered key starts with: more than any run spends. */
export const START_CREDITS = 1_000_000;

export interface FaultNode {
  served: Served;
  dataDir: TempDataDir;
  rootKey: string;
  kill(): void;
}

/** A node as a child process of `bun src/main.ts serve` on `env`'s servers. */
export async function startNode(env: Record<string, string>, rootKey: string, servers: Pick<ClusterServers, "initialise">): Promise<FaultNode> {
  const dataDir = tempDataDir();
  // A node never initialises its cluster: the first node of the servers does it first, as `tollgate cluster-init` would.
  await servers.initialise({ TOLLGATE_DATA_DIR: dataDir.dir, TOLLGATE_ROOT_KEY: rootKey });
  const served = await startServe({ dataDir: dataDir.dir, env: { ...env, TOLLGATE_ROOT_KEY: rootKey } });
  return { served, dataDir, rootKey, kill: () => { served.kill(); dataDir.cleanup(); } };
}

export interface Tally {
  /** Verifications answered VALID (each spent 1 credit). */
  valid: number;
  /** Answered with an error status (5xx), by error type's last part. */
  failed: Map<string, number>;
  /** Got no HTTP answer at all (the connection broke: a node killed). */
  unanswered: number;
  /** Any other answer (a bug). */
  other: string[];
}

/** `workers` loops of metered verifications over `keys` on `url`, until `stop()`; resolves the tally once every loop ended. */
export function meteredLoad(url: string, rootKey: string, keys: string[], workers: number): { tally: Tally; stop(): Promise<Tally> } {
  const tally: Tally = { valid: 0, failed: new Map(), unanswered: 0, other: [] };
  let running = true;
  const loop = async (w: number) => {
    for (let i = w; running; i += workers) {
      let res: Response;
      try {
        res = await fetch(`${url}/v2/keys.verifyKey`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
          body: JSON.stringify({ key: keys[i % keys.length] }),
        });
      } catch {
        tally.unanswered++;
        // A node that is gone refuses at once: do not spin.
        await Bun.sleep(20);
        continue;
      }
      const body = (await res.json().catch(() => ({}))) as { data?: { code?: string }; error?: { type?: string } };
      if (res.status === 200 && body.data?.code === "VALID") tally.valid++;
      else if (res.status >= 500 && body.error?.type) {
        const type = body.error.type.split("/").at(-1)!;
        tally.failed.set(type, (tally.failed.get(type) ?? 0) + 1);
      } else tally.other.push(`${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
  };
  const loops = Array.from({ length: workers }, (_, w) => loop(w));
  return {
    tally,
    async stop() {
      running = false;
      await Promise.all(loops);
      return tally;
    },
  };
}

/** Times `ask` over and over until `stop()`: the slowest answer and how many there were. */
export function timedProbe(ask: () => Promise<boolean>): { stop(): Promise<{ count: number; maxMs: number; wrong: number }> } {
  let running = true;
  const seen = { count: 0, maxMs: 0, wrong: 0 };
  const loop = (async () => {
    while (running) {
      const startedMs = performance.now();
      const right = await ask().catch(() => false);
      seen.maxMs = Math.max(seen.maxMs, performance.now() - startedMs);
      seen.count++;
      if (!right) seen.wrong++;
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return seen;
    },
  };
}

/** POSTs JSON to a node with the root key; the answer's status and body. */
export async function call(url: string, rootKey: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** The credits PostgreSQL shows taken from `keys` (START_CREDITS each at first), over a new connection. */
export async function creditsSpent(databaseUrl: string, keyIds: string[]): Promise<number> {
  const sql = new SQL(databaseUrl, { max: 1 });
  try {
    const [row] = await sql`SELECT coalesce(sum(${START_CREDITS}::int8 - remaining), 0)::int8::text AS spent FROM keys WHERE id IN ${sql(keyIds)}`;
    return Number(row.spent);
  } finally {
    await sql.close();
  }
}

/** One line of a node's /metrics by its name and labels (e.g. `tollgate_dependency_up{dependency="PostgreSQL"}`); undefined when absent. */
export async function metric(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Polls `holds` until it does; throws past `boundMs`. */
export async function eventually(what: string, boundMs: number, holds: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + boundMs;
  while (!(await holds().catch(() => false))) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await Bun.sleep(50);
  }
}

/** The PIDs of the processes whose parent is `pid` (PostgreSQL's backends and workers). */
export function childrenOf(pid: number): number[] {
  return Bun.spawnSync(["pgrep", "-P", String(pid)]).stdout.toString().split("\n").filter((line) => line !== "").map(Number);
}
